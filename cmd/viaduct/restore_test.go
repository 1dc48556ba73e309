package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// restoreConfig writes a configuration whose data directory is data.
func restoreConfig(t *testing.T, data string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "viaduct.yaml")
	conf := "data_dir: " + data + "\nsources:\n  - name: s\n    url: https://example.org/\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// viaduct restore refuses a backup cut short, and a data directory that
// holds anything, saying why, and writes nothing.
func TestRestoreRefuses(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	cfg := restoreConfig(t, data)
	empty := t.TempDir()
	var out, errs bytes.Buffer
	if code := Run(context.Background(), []string{"restore", "--config", cfg, "--from", empty}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "no manifest.json") {
		t.Fatalf("restore from a directory without a manifest: exit %d, %q", code, errs.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("a refused restore made the data directory: %v", err)
	}
	if code := Run(context.Background(), []string{"restore", "--config", cfg}, &out, &errs); code != 2 {
		t.Fatalf("restore without --from: exit %d, want 2", code)
	}
}
