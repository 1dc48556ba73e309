package deploy

import (
	"path"
	"strings"
	"testing"
	"time"
)

// unitFile is a systemd unit: its sections' keys, each with its values in
// order (a key may be given several times).
type unitFile map[string]map[string][]string

// readUnit reads the keys of a unit file, for the tests that compare it
// with its configuration and its install steps; whether systemd accepts
// it is deploy/check's `systemd-analyze verify`. It refuses lines outside
// a section, lines without "=" and continuation lines, which this unit
// does not use.
func readUnit(t *testing.T, file string) unitFile {
	t.Helper()
	u := unitFile{}
	var section string
	for i, line := range strings.Split(string(readFile(t, file)), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case section == "" || strings.HasSuffix(line, "\\"):
			t.Fatalf("%s:%d: %q", file, i+1, line)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s:%d: %q is not key=value", file, i+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

// get is the last value of a key, as systemd reads most keys.
func (u unitFile) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

const unitPath = "systemd/viaduct.service"

func TestSystemdUnitHardened(t *testing.T) {
	u := readUnit(t, unitPath)
	want := map[string]string{
		"NoNewPrivileges":         "yes",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"CapabilityBoundingSet":   "",
		"AmbientCapabilities":     "",
		"RestrictSUIDSGID":        "yes",
		"RestrictNamespaces":      "yes",
		"ProtectKernelTunables":   "yes",
		"ProtectKernelModules":    "yes",
		"ProtectControlGroups":    "yes",
		"LockPersonality":         "yes",
		"SystemCallArchitectures": "native",
	}
	for k, v := range want {
		if got, ok := u["Service"][k]; !ok || u.get("Service", k) != v {
			t.Errorf("%s: %s=%q, want %q", unitPath, k, got, v)
		}
	}
	if u.get("Service", "DynamicUser") != "yes" && u.get("Service", "User") == "" {
		t.Errorf("%s: runs as root: set DynamicUser=yes or a dedicated User", unitPath)
	}
	if u.get("Service", "SystemCallFilter") == "" || u.get("Service", "RestrictAddressFamilies") == "" {
		t.Errorf("%s: no system call filter or address family restriction", unitPath)
	}
	if u.get("Install", "WantedBy") == "" {
		t.Errorf("%s: nothing wants it: systemctl enable would do nothing", unitPath)
	}
}

// TestSystemdUnitConfig checks the configuration the unit starts with:
// it passes the checks, and it writes only where the unit lets it.
func TestSystemdUnitConfig(t *testing.T) {
	u := readUnit(t, unitPath)
	exec := strings.Fields(u.get("Service", "ExecStart"))
	if len(exec) < 2 || exec[0] != "/usr/local/bin/viaduct" || exec[1] != "serve" {
		t.Fatalf("%s: ExecStart %q is not /usr/local/bin/viaduct serve", unitPath, exec)
	}
	cfgPath, ok := flag(exec, "--config")
	if !ok {
		t.Fatalf("%s: ExecStart has no --config", unitPath)
	}
	if want := path.Join("/etc", u.get("Service", "ConfigurationDirectory"), "viaduct.yaml"); cfgPath != want {
		t.Errorf("%s: --config %s; the ConfigurationDirectory holds %s", unitPath, cfgPath, want)
	}
	const file = "systemd/viaduct.yaml"
	// EnvironmentFile= is optional (a leading "-"): the configuration
	// must pass without it.
	if ef := u.get("Service", "EnvironmentFile"); ef != "" && !strings.HasPrefix(ef, "-") {
		t.Errorf("%s: EnvironmentFile=%s is required; a node that needs no secret has none", unitPath, ef)
	}
	cfg := checkViaductConfig(t, file, readFile(t, file), nil)
	state := path.Join("/var/lib", u.get("Service", "StateDirectory"))
	if u.get("Service", "StateDirectory") == "" || cfg.DataDir != state {
		t.Errorf("%s: data_dir %s; the unit may write only its StateDirectory %s", file, cfg.DataDir, state)
	}
	for what, p := range map[string]string{"catalog.path": cfg.Catalog.Path, "queue.dir": cfg.Queue.Dir, "blobs.dir": cfg.Blobs.Dir} {
		if p != "" && !strings.HasPrefix(path.Clean(p)+"/", state+"/") {
			t.Errorf("%s: %s %s is outside the StateDirectory %s, which ProtectSystem=strict makes read-only", file, what, p, state)
		}
	}
	if wd := u.get("Service", "WorkingDirectory"); wd != state {
		t.Errorf("%s: WorkingDirectory %s, not the StateDirectory %s", unitPath, wd, state)
	}
	stop, err := time.ParseDuration(u.get("Service", "TimeoutStopSec"))
	if need := cfg.Health.ShutdownGrace + cfg.Fetch.DrainTimeout + 10*time.Second; err != nil || stop < need {
		t.Errorf("%s: TimeoutStopSec=%s; %s needs %v to stop cleanly (%v)", unitPath, u.get("Service", "TimeoutStopSec"), file, need, err)
	}
	if h, _ := hostPort(t, "listen", cfg.Listen); h != "127.0.0.1" && h != "::1" {
		t.Errorf("%s: listens on %s; the single-node install sits behind a local proxy", file, cfg.Listen)
	}
}
