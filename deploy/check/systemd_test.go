package check

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
)

// skipWithoutSystemdAnalyze skips where systemd-analyze is absent, the one
// check of deploy/ that may be skipped, and says so. In CI, where the
// project installs it, a missing one fails.
func skipWithoutSystemdAnalyze(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, ErrNoSystemdAnalyze) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: CI must check the unit (apt-get install systemd)", err)
		}
		t.Skipf("SKIPPED: the systemd unit is not checked: %v", err)
	}
}

func TestSystemdUnitVerifies(t *testing.T) {
	err := Unit(context.Background(), path(UnitFile))
	skipWithoutSystemdAnalyze(t, err)
	if err != nil {
		t.Fatal(err)
	}
}

func TestSystemdUnitRefusesBroken(t *testing.T) {
	for _, c := range []struct {
		breakage
		want string
	}{
		{breakage{"a misspelt hardening directive", "ProtectClock=yes", "ProtectClok=yes"}, "Unknown key 'ProtectClok'"},
		{breakage{"a value systemd cannot parse", "NoNewPrivileges=yes", "NoNewPrivileges=maybe"}, "maybe"},
		{breakage{"a section misspelt", "[Install]", "[Instal]"}, "Instal"},
	} {
		err := Unit(context.Background(), broken(t, UnitFile, c.breakage))
		skipWithoutSystemdAnalyze(t, err)
		refused(t, c.breakage, err, c.want)
	}
}

func TestSysusersMakesTheUnitsUser(t *testing.T) {
	users, groups, err := Sysusers(context.Background(), path(SysusersFile))
	skipWithoutSystemdAnalyze(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(users, []string{"viaduct"}) || !slices.Equal(groups, []string{"viaduct"}) {
		t.Errorf("%s makes users %q and groups %q; the unit runs as viaduct:viaduct", SysusersFile, users, groups)
	}
	b := breakage{"a line systemd-sysusers cannot read", "/var/lib/viaduct", "/var/lib/viaduct /bin/sh extra"}
	_, _, err = Sysusers(context.Background(), broken(t, SysusersFile, b))
	refused(t, b, err, "Trailing garbage")
}
