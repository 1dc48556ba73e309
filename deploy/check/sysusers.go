package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SysusersFile declares the system user of deploy/systemd's unit.
const SysusersFile = "systemd/viaduct.sysusers"

// Sysusers applies a sysusers.d file with systemd-sysusers to an empty
// root directory, as installing it does to the machine's, and returns
// the users and groups it made.
func Sysusers(ctx context.Context, file string) (users, groups []string, err error) {
	tool, err := exec.LookPath("systemd-sysusers")
	if err != nil {
		return nil, nil, ErrNoSystemdAnalyze
	}
	root, err := os.MkdirTemp("", "viaduct-sysusers-")
	if err != nil {
		return nil, nil, fmt.Errorf("checking %s: %w", file, err)
	}
	defer os.RemoveAll(root)
	if err := os.Mkdir(filepath.Join(root, "etc"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("checking %s: %w", file, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, nil, fmt.Errorf("checking %s: %w", file, err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, tool, "--root="+root, abs)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("systemd-sysusers %s: %w: %s", file, err, strings.TrimSpace(out.String()))
	}
	names := func(db string) []string {
		b, _ := os.ReadFile(filepath.Join(root, "etc", db))
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if name, _, ok := strings.Cut(l, ":"); ok {
				out = append(out, name)
			}
		}
		return out
	}
	return names("passwd"), names("group"), nil
}
