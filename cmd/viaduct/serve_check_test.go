package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeCheckReportsEveryError: one run of serve --check lists every
// broken Source, each as file:line: field: message, and exits 1.
func TestServeCheckReportsEveryError(t *testing.T) {
	f := filepath.Join(t.TempDir(), "viaduct.yaml")
	yaml := "sources:\n  - name: a\n    url: ftp://a/\n  - name: b\n    url: http://b.example/\n    schedule: sometimes\n"
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "serve", "--check", "--config", f)
	for _, want := range []string{"config " + f + ": 2 errors:\n", f + `:3: sources[0].url: "ftp://a/"`, f + `:6: sources[1].schedule: "sometimes"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if code != 1 || out != "" || t.Failed() {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
