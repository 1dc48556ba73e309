package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// breakage is one mistake made on purpose in a file of deploy/: old, which
// must occur in the file, becomes new in its first place.
type breakage struct {
	name, old, new string
}

// broken writes a copy of the file of deploy/ at rel with b applied into
// a temporary directory, at the same relative path, and returns its path.
func broken(t *testing.T, rel string, b breakage) string {
	t.Helper()
	data, err := os.ReadFile(path(rel))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), b.old) {
		t.Fatalf("%s: %q is not in the file: the breakage %q breaks nothing", rel, b.old, b.name)
	}
	out := filepath.Join(t.TempDir(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(strings.Replace(string(data), b.old, b.new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// refused fails the test unless err is an error that says want.
func refused(t *testing.T, b breakage, err error, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", b.name)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: refused, but the error does not say %q: %v", b.name, want, err)
		return
	}
	t.Logf("%s: %v", b.name, err)
}
