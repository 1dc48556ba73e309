package dump

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// zfile is one ZIP entry for a hand-built package.
type zfile struct {
	name   string
	data   []byte
	method uint16
	mode   os.FileMode // 0: regular 0644
	edit   func(*zip.FileHeader)
}

// buildZip writes files into a ZIP held in memory.
func buildZip(t testing.TB, files ...zfile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		fh := &zip.FileHeader{Name: f.name, Method: f.method}
		if f.mode != 0 {
			fh.SetMode(f.mode)
		} else {
			fh.SetMode(0o644)
		}
		if f.edit != nil {
			f.edit(fh)
		}
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile puts b in a file under t.TempDir and returns its path.
func writeFile(t testing.TB, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "package.zip")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// item is one bitstream of a test manifest.
type item struct {
	loc, path string
	data      []byte
	change    string
	hash      string // "" computes md5 and sha-256
	length    int64  // -1 computes
}

// manifest writes a manifest of kind capability with items.
func manifest(t testing.TB, capability string, items ...item) []byte {
	t.Helper()
	h := &resourcesync.Header{MD: resourcesync.MD{Capability: capability}}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if capability == resourcesync.CapChangeDumpManifest {
		h.MD.From = t0
	} else {
		h.MD.At = t0
	}
	var buf bytes.Buffer
	w, err := resourcesync.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		md := &resourcesync.MD{Path: it.path, Change: it.change}
		if it.change != resourcesync.Deleted {
			hs := resourcesync.NewHasher()
			hs.Write(it.data)
			md.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: hs.Sum().Get(resourcesync.MD5)}, {Alg: resourcesync.SHA256, Value: hs.Sum().Get(resourcesync.SHA256)}}
			if it.hash != "" {
				md.Hash, _ = resourcesync.ParseHashes(it.hash)
			}
			n := int64(len(it.data))
			if it.length >= 0 {
				n = it.length
			}
			if it.length != noLength {
				md.Length = &n
			}
		}
		e := &resourcesync.Entry{Loc: it.loc, LastMod: t0.Add(time.Duration(i) * time.Minute), MD: md}
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// noLength as an item's length leaves the attribute out.
const noLength = -2

// res is a bitstream item with computed hash and length.
func res(loc, path, data string) item {
	return item{loc: loc, path: path, data: []byte(data), length: -1}
}

// readAll opens path and returns each entry's verified bytes by loc.
func readAll(t testing.TB, path string, opts Options) (map[string]string, error) {
	t.Helper()
	p, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	got := map[string]string{}
	err = p.Entries(t.Context(), func(e *resourcesync.Entry, b *Body) error {
		if b == nil {
			got[e.Loc] = "(deleted)"
			return nil
		}
		data, err := io.ReadAll(b)
		if err != nil {
			return err
		}
		got[e.Loc] = string(data)
		return nil
	})
	return got, err
}

// wantRefusal asserts err is an *Error of kind, naming entry (when not
// empty) and saying why (a fragment of the reason).
func wantRefusal(t *testing.T, err error, kind error, entry, why string) {
	t.Helper()
	if err == nil {
		t.Fatalf("package accepted, want a refusal (%v: %s)", kind, why)
	}
	var de *Error
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *dump.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %q: kind %v, want %v", err, de.Kind, kind)
	}
	if entry != "" && !strings.Contains(de.Entry, entry) {
		t.Errorf("error %q: entry %q, want it to name %q", err, de.Entry, entry)
	}
	if !strings.Contains(de.Reason, why) {
		t.Errorf("error %q: reason %q, want it to say %q", err, de.Reason, why)
	}
	if de.Package == "" {
		t.Errorf("error %q names no package", err)
	}
}

// patchCentral overwrites size bytes at off in the central directory
// header of entry name, as a hostile producer would.
func patchCentral(t testing.TB, b []byte, name string, off, size int, v uint64) {
	t.Helper()
	patchHeader(t, b, "PK\x01\x02", 28, 46, name, off, size, v)
}

// patchLocal does the same in the entry's local header.
func patchLocal(t testing.TB, b []byte, name string, off, size int, v uint64) {
	t.Helper()
	patchHeader(t, b, "PK\x03\x04", 26, 30, name, off, size, v)
}

func patchHeader(t testing.TB, b []byte, sig string, nameLenAt, nameAt int, name string, off, size int, v uint64) {
	t.Helper()
	for i := 0; i+nameAt < len(b); i++ {
		if string(b[i:i+4]) != sig {
			continue
		}
		n := int(b[i+nameLenAt]) | int(b[i+nameLenAt+1])<<8
		if i+nameAt+n > len(b) || string(b[i+nameAt:i+nameAt+n]) != name {
			continue
		}
		for k := 0; k < size; k++ {
			b[i+off+k] = byte(v >> (8 * k))
		}
		return
	}
	t.Fatalf("no %q header for %q", sig, name)
}
