package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// UnitFile is the systemd unit of deploy/systemd.
const UnitFile = "systemd/viaduct.service"

// ErrNoSystemdAnalyze is returned where systemd's tools
// (systemd-analyze, systemd-sysusers) are not installed: the unit and
// its user cannot be checked there.
var ErrNoSystemdAnalyze = errors.New("systemd-analyze or systemd-sysusers is not installed")

// unitBinary is the program the unit runs, which is not installed where
// the unit is checked.
const unitBinary = "/usr/local/bin/viaduct"

// Unit runs `systemd-analyze verify` on a unit file. systemd only warns
// about an unknown key or a value it cannot parse, and ignores the line,
// so every line it prints is an error here: a misspelt hardening option
// would otherwise leave the service less confined without a word.
//
// verify also insists that the unit's programs exist; the unit is
// checked as a copy whose ExecStart names an empty stand-in for the
// viaduct binary, in a directory of the same name, so that systemd's
// messages still name viaduct.service.
func Unit(ctx context.Context, file string) error {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return ErrNoSystemdAnalyze
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading unit: %w", err)
	}
	dir, err := os.MkdirTemp("", "viaduct-unit-")
	if err != nil {
		return fmt.Errorf("checking %s: %w", file, err)
	}
	defer os.RemoveAll(dir)
	stub := filepath.Join(dir, "viaduct")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\n"), 0o755); err != nil {
		return fmt.Errorf("checking %s: %w", file, err)
	}
	unit := filepath.Join(dir, filepath.Base(file))
	if err := os.WriteFile(unit, bytes.ReplaceAll(b, []byte(unitBinary), []byte(stub)), 0o644); err != nil {
		return fmt.Errorf("checking %s: %w", file, err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, analyze, "verify", "--man=no", unit)
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	text := strings.TrimSpace(strings.ReplaceAll(out.String(), unit, file))
	switch {
	case runErr != nil:
		return fmt.Errorf("systemd-analyze verify %s: %w: %s", file, runErr, text)
	case text != "":
		return fmt.Errorf("systemd-analyze verify %s: %s", file, text)
	}
	return nil
}
