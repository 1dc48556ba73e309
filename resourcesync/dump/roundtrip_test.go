package dump

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func entry(loc, typ string, n int, change string, at time.Time) *resourcesync.Entry {
	l := int64(n)
	return &resourcesync.Entry{Loc: loc, LastMod: at, MD: &resourcesync.MD{Type: typ, Length: &l, Change: change}}
}

func TestRoundTripResourceDump(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: at},
		Links: []resourcesync.Link{{Rel: "up", Href: "http://mirror.example/c1/capabilitylist.xml"}}}
	bodies := map[string]string{
		"http://example.com/res1":            "<html>" + strings.Repeat("hello ", 500) + "</html>",
		"http://example.com/img/a%20b.png":   "\x89PNG not really",
		"http://example.com/dir/":            "an index page",
		"http://example.com/q?x=1&y=../../z": "a query",
		"http://example.com/empty":           "",
	}
	types := map[string]string{"http://example.com/img/a%20b.png": "image/png"}
	var zbuf, copyBuf bytes.Buffer
	w, err := NewWriter(&zbuf, h, Config{TempDir: t.TempDir(), ManifestCopy: &copyBuf})
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"http://example.com/res1", "http://example.com/img/a%20b.png", "http://example.com/dir/", "http://example.com/q?x=1&y=../../z", "http://example.com/empty"} {
		typ := types[loc]
		if typ == "" {
			typ = "text/html"
		}
		if err := w.Add(t.Context(), entry(loc, typ, len(bodies[loc]), "", time.Time{}), strings.NewReader(bodies[loc])); err != nil {
			t.Fatalf("Add %s: %v", loc, err)
		}
	}
	h.MD.Completed = at.Add(time.Minute) // set before Close, written by it
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	path := writeFile(t, zbuf.Bytes())
	p, err := Open(path, Options{Name: "http://mirror.example/rd1.zip", Want: resourcesync.KindResourceDumpManifest})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got := p.Header().MD.Completed; !got.Equal(at.Add(time.Minute)) {
		t.Errorf("manifest completed = %v, want the value set before Close", got)
	}
	if p.Len() != len(bodies) {
		t.Errorf("Len = %d, want %d", p.Len(), len(bodies))
	}
	got := map[string]string{}
	err = p.Entries(t.Context(), func(e *resourcesync.Entry, b *Body) error {
		data, err := io.ReadAll(b)
		if err != nil {
			return err
		}
		sums, err := b.Verify()
		if err != nil {
			return err
		}
		if sums.Get(resourcesync.SHA256) != e.MD.Hash.Get(resourcesync.SHA256) || e.MD.Hash.Get(resourcesync.MD5) == "" {
			t.Errorf("%s: manifest hash %s, computed %s", e.Loc, e.MD.Hash, sums)
		}
		if !strings.HasPrefix(e.MD.Path, "/resources/example.com/") {
			t.Errorf("%s: path %q, want it under /resources/example.com/", e.Loc, e.MD.Path)
		}
		got[e.Loc] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for loc, want := range bodies {
		if got[loc] != want {
			t.Errorf("%s: read %q, want %q", loc, got[loc], want)
		}
	}

	// The copy beside the package is the manifest in it, byte for byte.
	zr, _ := zip.NewReader(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	methods := map[string]uint16{}
	var inZip []byte
	for _, f := range zr.File {
		methods[f.Name] = f.Method
		if f.Name == ManifestName {
			rc, _ := f.Open()
			inZip, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	if !bytes.Equal(inZip, copyBuf.Bytes()) || len(inZip) == 0 {
		t.Errorf("manifest copy differs from manifest.xml in the package:\n%s\n---\n%s", copyBuf.Bytes(), inZip)
	}
	if zr.File[len(zr.File)-1].Name != ManifestName {
		t.Errorf("last entry %q, want manifest.xml written last", zr.File[len(zr.File)-1].Name)
	}
	if m := methods["resources/example.com/img/a%20b.png"]; m != zip.Store {
		t.Errorf("png method %d, want stored; methods %v", m, methods)
	}
	if m := methods["resources/example.com/res1"]; m != zip.Deflate {
		t.Errorf("html method %d, want deflate", m)
	}
	if _, ok := methods["resources/example.com/dir/index"]; !ok {
		t.Errorf("no path for a URI ending in /; entries %v", methods)
	}
}

func TestRoundTripChangeDump(t *testing.T) {
	from := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapChangeDumpManifest, From: from}}
	var zbuf bytes.Buffer
	w, err := NewWriter(&zbuf, h, Config{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		loc, change, body string
	}{
		{"http://example.com/a", resourcesync.Created, "a1"},
		{"http://example.com/b", resourcesync.Created, "b1"},
		{"http://example.com/a", resourcesync.Updated, "a2"},
		{"http://example.com/b", resourcesync.Deleted, ""},
	}
	for i, s := range steps {
		e := entry(s.loc, "text/plain", len(s.body), s.change, from.Add(time.Duration(i)*time.Hour))
		var body io.Reader = strings.NewReader(s.body)
		if s.change == resourcesync.Deleted {
			e.MD.Length, body = nil, nil
		}
		if err := w.Add(t.Context(), e, body); err != nil {
			t.Fatalf("Add %d: %v", i, err)
		}
	}
	h.MD.Until = from.Add(24 * time.Hour)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p, err := Open(writeFile(t, zbuf.Bytes()), Options{Want: resourcesync.KindChangeDumpManifest})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = p.Entries(t.Context(), func(e *resourcesync.Entry, b *Body) error {
		s := e.Loc + " " + e.MD.Change
		if b != nil {
			data, err := io.ReadAll(b)
			if err != nil {
				return err
			}
			s += " " + string(data) + " " + e.MD.Path
		}
		seen = append(seen, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"http://example.com/a created a1 /changes/example.com/a",
		"http://example.com/b created b1 /changes/example.com/b",
		"http://example.com/a updated a2 /changes/example.com/a~2",
		"http://example.com/b deleted",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes read:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if _, err := Open(writeFile(t, zbuf.Bytes()), Options{Want: resourcesync.KindResourceDumpManifest}); !errors.Is(err, ErrManifest) {
		t.Errorf("Change Dump package opened as a Resource Dump: %v", err)
	}
}

func TestWriterFull(t *testing.T) {
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: time.Now()}}
	var zbuf bytes.Buffer
	w, err := NewWriter(&zbuf, h, Config{MaxEntries: 3, MaxBytes: 10, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	add := func(loc, body string) error {
		return w.Add(t.Context(), entry(loc, "text/plain", len(body), "", time.Time{}), strings.NewReader(body))
	}
	if err := add("http://e.x/1", "123456"); err != nil {
		t.Fatal(err)
	}
	if err := add("http://e.x/2", "12345"); !errors.Is(err, ErrFull) {
		t.Fatalf("11 bytes into a 10-byte package: %v, want ErrFull", err)
	}
	if err := add("http://e.x/3", "1234"); err != nil {
		t.Fatalf("a fitting entry after ErrFull: %v", err)
	}
	if err := add("http://e.x/4", ""); err != nil {
		t.Fatal(err)
	}
	if err := add("http://e.x/5", ""); !errors.Is(err, ErrFull) {
		t.Fatalf("4th entry with MaxEntries 3: %v, want ErrFull", err)
	}
	if n, b := w.Len(); n != 3 || b != 10 {
		t.Errorf("Len = %d, %d; want 3, 10", n, b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, writeFile(t, zbuf.Bytes()), Options{})
	if err != nil || len(got) != 3 || got["http://e.x/2"] != "" {
		t.Errorf("package after ErrFull: %v, %v", got, err)
	}

	// A bitstream larger than MaxBytes goes alone into an empty package.
	w2, _ := NewWriter(io.Discard, h, Config{MaxBytes: 2, TempDir: t.TempDir()})
	if err := w2.Add(t.Context(), entry("http://e.x/big", "text/plain", 5, "", time.Time{}), strings.NewReader("12345")); err != nil {
		t.Errorf("large bitstream into an empty package: %v", err)
	}
	w2.Close()
}

func TestWriterRefusesWrongBytes(t *testing.T) {
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: time.Now()}}
	dir := t.TempDir()
	w, _ := NewWriter(io.Discard, h, Config{TempDir: dir})
	if err := w.Add(t.Context(), entry("http://e.x/1", "text/plain", 4, "", time.Time{}), strings.NewReader("12345")); err == nil {
		t.Error("5 bytes for a 4-byte entry accepted")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed Add reported success")
	}
	w, _ = NewWriter(io.Discard, h, Config{TempDir: dir})
	e := entry("http://e.x/1", "text/plain", 3, "", time.Time{})
	e.MD.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "00000000000000000000000000000000"}}
	if err := w.Add(t.Context(), e, strings.NewReader("abc")); err == nil || !strings.Contains(err.Error(), "md5") {
		t.Errorf("bytes not matching the entry's hash: %v", err)
	}
	w.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
