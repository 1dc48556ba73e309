package dump

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

const cdm = resourcesync.CapChangeDumpManifest

func TestManifestMismatch(t *testing.T) {
	alpha := []byte("alpha")
	run(t, []hostile{
		{name: "listed but missing", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", "/res/a", "alpha"), res("http://e.x/b", "/res/b", "beta"))},
				zfile{name: "res/a", data: alpha})
		}, atOpen: true, kind: ErrMismatch, entry: "http://e.x/b", why: `"/res/b" is not in the package`},
		{name: "listed twice", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", "/res/a", "alpha"), res("http://e.x/b", "/res/a", "alpha"))},
				zfile{name: "res/a", data: alpha})
		}, atOpen: true, kind: ErrMismatch, entry: "http://e.x/b", why: "listed twice"},
		{name: "length differs", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/res/a", data: alpha, length: 6})},
				zfile{name: "res/a", data: alpha})
		}, atOpen: true, kind: ErrMismatch, entry: "http://e.x/a", why: "length 6"},
		{name: "wrong hash", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/res/a", data: alpha, length: -1, hash: "md5:1584abdf8ebdc9802ac0c6a7402c03b6"})},
				zfile{name: "res/a", data: alpha})
		}, kind: ErrMismatch, entry: "res/a", why: "hash differs"},
		{name: "hash of no algorithm computed", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/res/a", data: alpha, length: -1, hash: "sha-512:abcd"})},
				zfile{name: "res/a", data: alpha})
		}, kind: ErrMismatch, entry: "res/a", why: "hash differs"},
		{name: "entry without path", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", data: alpha, length: -1})})
		}, atOpen: true, kind: ErrManifest, entry: "http://e.x/a", why: "without a path"},
		{name: "path names the manifest", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/manifest.xml", length: noLength})})
		}, atOpen: true, kind: ErrManifest, why: "manifest itself"},
		{name: "deletion in a Resource Dump", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", change: resourcesync.Deleted})})
		}, atOpen: true, kind: ErrManifest, why: "deleted entry in a Resource Dump"},
		{name: "change without change attribute", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, cdm, res("http://e.x/a", "/a", "alpha"))}, zfile{name: "a", data: alpha})
		}, atOpen: true, kind: ErrManifest, entry: "http://e.x/a", why: "without a change attribute"},
		{name: "deletion with a path", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, cdm, item{loc: "http://e.x/a", path: "/a", change: resourcesync.Deleted})}, zfile{name: "a", data: alpha})
		}, atOpen: true, kind: ErrManifest, why: "deleted entry with a path"},
		{name: "changes out of order", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: changeManifest(t, 3, 1)})
		}, atOpen: true, kind: ErrManifest, why: "not chronological"},
		{name: "change before from", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: changeManifest(t, -1)})
		}, atOpen: true, kind: ErrManifest, why: "outside the manifest's from/until"},
	})
}

// changeManifest is a Change Dump Manifest from 2024-01-01 whose entries
// are deletions at the given hours.
func changeManifest(t *testing.T, hours ...int) []byte {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	w, _ := resourcesync.NewWriter(&buf, &resourcesync.Header{MD: resourcesync.MD{Capability: cdm, From: t0}})
	for _, h := range hours {
		w.Write(&resourcesync.Entry{Loc: "http://e.x/a", LastMod: t0.Add(time.Duration(h) * time.Hour), MD: &resourcesync.MD{Change: resourcesync.Deleted}})
	}
	w.Close()
	return buf.Bytes()
}

// TestSpecManifests opens packages whose manifest.xml is each of the
// spec's dump manifest examples (18 and 23), with bitstreams of the
// declared lengths at the declared paths: the manifests parse and pass
// every structural check; the examples' hashes are of no real bytes, so
// Check must then refuse the bitstreams.
func TestSpecManifests(t *testing.T) {
	for _, dir := range []string{"examples-1.0", "examples-1.1"} {
		for _, ex := range []struct {
			file  string
			want  resourcesync.Kind
			paths map[string]int
		}{
			{"ex_18.xml", resourcesync.KindResourceDumpManifest, map[string]int{"resources/res1": 8876, "resources/res2": 14599}},
			{"ex_23.xml", resourcesync.KindChangeDumpManifest, map[string]int{"changes/res7.html": 4339, "changes/res9.pdf": 38297, "changes/res7-v2.html": 5426}},
		} {
			t.Run(dir+"/"+ex.file, func(t *testing.T) {
				doc, err := os.ReadFile(filepath.Join("../testdata/spec", dir, ex.file))
				if err != nil {
					t.Fatal(err)
				}
				files := []zfile{{name: ManifestName, data: doc}}
				for p, n := range ex.paths {
					files = append(files, zfile{name: p, data: make([]byte, n)})
				}
				p, err := Open(writeFile(t, buildZip(t, files...)), Options{Want: ex.want})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				if p.Len() < len(ex.paths) || p.Header().Kind() != ex.want {
					t.Errorf("manifest read as %s with %d entries", p.Header().Kind(), p.Len())
				}
				if err := p.Check(t.Context()); !errors.Is(err, ErrMismatch) {
					t.Errorf("Check of bytes that match no example hash: %v, want ErrMismatch", err)
				}
			})
		}
	}
}

func TestSpool(t *testing.T) {
	dir := t.TempDir()
	path, err := Spool(t.Context(), strings.NewReader("0123456789"), dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "0123456789" {
		t.Errorf("spooled %q", b)
	}
	os.Remove(path)
	if _, err := Spool(t.Context(), strings.NewReader("0123456789x"), dir, 10); !errors.Is(err, ErrLimit) {
		t.Errorf("11 bytes with a 10-byte cap: %v, want ErrLimit", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Spool(ctx, strings.NewReader("x"), dir, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled spool: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left after failed spools: %v", left)
	}
}

func TestDerivePath(t *testing.T) {
	for uri, want := range map[string]string{
		"http://Example.com/a/b.html":     "/resources/example.com/a/b.html",
		"http://example.com/":             "/resources/example.com/index",
		"http://example.com/a/../../etc":  "/resources/example.com/a/%2E%2E/%2E%2E/etc",
		"http://example.com/a%2F..%2Fb":   "/resources/example.com/a%2F..%2Fb",
		"http://example.com:8080/x?q=1":   "/resources/example.com%3A8080/x%3Fq%3D1",
		"http://example.com/C:/x\\y":      "/resources/example.com/C%3A/x%5Cy",
		"urn:isbn:0451450523":             "/resources/_/",
		"http://example.com/" + longSeg(): "/resources/_/",
	} {
		got := DerivePath("resources", uri)
		if !strings.HasPrefix(got, want) || (strings.HasSuffix(want, "/_/") && len(got) != len(want)+64) {
			t.Errorf("DerivePath(%q) = %q, want %q", uri, got, want)
		}
		if why := unsafeName(strings.TrimPrefix(got, "/")); why != "" {
			t.Errorf("DerivePath(%q) = %q, which the reader refuses: %s", uri, got, why)
		}
	}
}

func longSeg() string { return strings.Repeat("x", 300) }
