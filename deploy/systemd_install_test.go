package deploy

import (
	"strconv"
	"strings"
	"testing"
)

// installStep is one `install` command of the systemd instructions.
type installStep struct {
	line               string
	mode, owner, group string
	dest               string
}

// installSteps reads the `install` commands of a text (deploy/README.md,
// the unit's header comment), in order.
func installSteps(t *testing.T, file string) []installStep {
	t.Helper()
	var out []installStep
	for _, line := range strings.Split(string(readFile(t, file)), "\n") {
		f := strings.Fields(strings.TrimLeft(line, "# "))
		if len(f) > 0 && f[0] == "sudo" {
			f = f[1:]
		}
		if len(f) == 0 || f[0] != "install" {
			continue
		}
		s := installStep{line: strings.TrimSpace(line), owner: "root", group: "root", mode: "0755"}
		var args []string
		for i := 1; i < len(f) && !strings.HasPrefix(f[i], "#"); i++ {
			switch f[i] {
			case "-m", "-o", "-g":
				if i+1 >= len(f) {
					t.Fatalf("%s: %q: %s without a value", file, s.line, f[i])
				}
				*map[string]*string{"-m": &s.mode, "-o": &s.owner, "-g": &s.group}[f[i]] = f[i+1]
				i++
			case "-D":
			default:
				args = append(args, f[i])
			}
		}
		s.dest = args[len(args)-1]
		out = append(out, s)
	}
	return out
}

// TestSystemdInstallReadsConfig checks the systemd instructions against
// the unit: the service's user can read the configuration they install,
// and no other user can (it may hold credentials). A configuration
// installed root 0640 for a unit with DynamicUser= stopped the service at
// start with "permission denied".
func TestSystemdInstallReadsConfig(t *testing.T) {
	u := readUnit(t, unitPath)
	user, group := u.get("Service", "User"), u.get("Service", "Group")
	dynamic := u.get("Service", "DynamicUser") == "yes"
	if user == "" || group == "" {
		t.Fatalf("%s: User=%q Group=%q: name the service's user and group", unitPath, user, group)
	}
	const sysusers = "systemd/viaduct.sysusers"
	var made []string
	for _, l := range strings.Split(string(readFile(t, sysusers)), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "u" {
			made = append(made, f[1])
		}
	}
	if len(made) != 1 || made[0] != user || group != user {
		t.Errorf("%s makes user and group %q; the unit runs as %s:%s", sysusers, made, user, group)
	}
	cfgPath, _ := flag(strings.Fields(u.get("Service", "ExecStart")), "--config")
	for _, doc := range []string{"README.md", unitPath} {
		var cfg *installStep
		sysusersFirst := false
		for _, s := range installSteps(t, doc) {
			if strings.HasPrefix(s.dest, "/etc/sysusers.d/") && cfg == nil {
				sysusersFirst = true
			}
			if s.dest == cfgPath {
				cfg = &s
			}
		}
		if cfg == nil {
			t.Errorf("%s: no install step for %s", doc, cfgPath)
			continue
		}
		if !sysusersFirst || !strings.Contains(string(readFile(t, doc)), "systemd-sysusers") {
			t.Errorf("%s: the user must exist (install %s in /etc/sysusers.d/, run systemd-sysusers) before the configuration is given its group", doc, sysusers)
		}
		mode, err := strconv.ParseUint(cfg.mode, 8, 32)
		if err != nil {
			t.Fatalf("%s: %q: mode: %v", doc, cfg.line, err)
		}
		// A dynamic user is neither the owner nor in the group of a file
		// installed before the service first starts.
		readable := mode&0o004 != 0 ||
			!dynamic && cfg.group == group && mode&0o040 != 0 ||
			!dynamic && cfg.owner == user && mode&0o400 != 0
		if !readable {
			t.Errorf("%s: %q: the service (User=%s Group=%s DynamicUser=%v) cannot read its configuration", doc, cfg.line, user, group, dynamic)
		}
		if mode&0o007 != 0 {
			t.Errorf("%s: %q: other users can read the configuration, which may hold credentials", doc, cfg.line)
		}
		if cfg.owner != "root" || mode&0o020 != 0 {
			t.Errorf("%s: %q: only root should change the configuration", doc, cfg.line)
		}
	}
}
