package dump

import (
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestUnlistedFilesIgnored opens a package holding files its manifest
// does not list (a producer's README, a stray file): the package is
// used, the listed bitstream verified and handed out, the others never
// read and reported by Unlisted.
func TestUnlistedFilesIgnored(t *testing.T) {
	pkg := good(t, zfile{name: "README.txt", data: []byte("made by hand")}, zfile{name: "res/extra", data: []byte("x")})
	p, err := Open(writeFile(t, pkg), Options{Want: resourcesync.KindResourceDumpManifest})
	if err != nil {
		t.Fatalf("package with unlisted files refused: %v", err)
	}
	defer p.Close()
	if n, names := p.Unlisted(); n != 2 || len(names) != 2 {
		t.Fatalf("Unlisted() = %d %v, want the 2 files", n, names)
	}
	var got []string
	err = p.Entries(t.Context(), func(e *resourcesync.Entry, b *Body) error {
		got = append(got, e.Loc)
		return nil
	})
	if err != nil {
		t.Fatalf("Entries: %v", err)
	}
	if len(got) != 1 || got[0] != "http://e.x/a" {
		t.Fatalf("entries %v, want the one listed", got)
	}
	if err := p.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}
