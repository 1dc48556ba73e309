package dump

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

const rdm = resourcesync.CapResourceDumpManifest

// hostile is one package a Source could serve that must be refused.
type hostile struct {
	name   string
	pkg    func(t *testing.T) []byte
	lim    Limits
	atOpen bool   // refused by Open; else by Check (and Entries)
	kind   error  // the Err* kind
	entry  string // fragment of Error.Entry
	why    string // fragment of Error.Reason
}

// good is a well-formed package with the given extra ZIP entries.
func good(t *testing.T, extra ...zfile) []byte {
	files := []zfile{
		{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", "/res/a", "alpha"))},
		{name: "res/a", data: []byte("alpha")},
	}
	return buildZip(t, append(files, extra...)...)
}

// withPath is a package whose one bitstream sits at ZIP name zname and
// is listed at manifest path mpath.
func withPath(zname, mpath string) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		return buildZip(t,
			zfile{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", mpath, "alpha"))},
			zfile{name: zname, data: []byte("alpha")})
	}
}

func TestHostilePaths(t *testing.T) {
	run(t, []hostile{
		{name: "dotdot entry", pkg: withPath("../../etc/passwd", "/../../etc/passwd"), atOpen: true, kind: ErrUnsafe, entry: "../../etc/passwd", why: ".."},
		{name: "dotdot inside", pkg: withPath("res/../../x", "/res/../../x"), atOpen: true, kind: ErrUnsafe, entry: "res/../../x", why: ".."},
		{name: "absolute entry", pkg: withPath("/etc/passwd", "/etc/passwd"), atOpen: true, kind: ErrUnsafe, entry: "/etc/passwd", why: "absolute"},
		{name: "backslash", pkg: withPath(`..\..\evil`, `/..\..\evil`), atOpen: true, kind: ErrUnsafe, entry: `evil`, why: "backslash"},
		{name: "drive letter", pkg: withPath("C:/Windows/evil", "/C:/Windows/evil"), atOpen: true, kind: ErrUnsafe, entry: "C:", why: "drive letter"},
		{name: "NUL", pkg: withPath("res/a\x00.txt", "/res/a\x00.txt"), atOpen: true, kind: ErrUnsafe, entry: `\x00`, why: "control character"},
		{name: "not clean", pkg: withPath("res/./a", "/res/./a"), atOpen: true, kind: ErrUnsafe, entry: "res/./a", why: "not clean"},
		{name: "double slash", pkg: withPath("res//a", "/res//a"), atOpen: true, kind: ErrUnsafe, entry: "res//a", why: "not clean"},
		{name: "manifest path escapes", pkg: withPath("res/a", "/res/../../../etc/passwd"), atOpen: true, kind: ErrUnsafe, entry: "http://e.x/a", why: ".."},
		{name: "symlink", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: "res/link", data: []byte("/etc/passwd"), mode: os.ModeSymlink | 0o777})
		}, atOpen: true, kind: ErrUnsafe, entry: "res/link", why: "symbolic link"},
		{name: "device", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: "res/dev", mode: os.ModeDevice | 0o600})
		}, atOpen: true, kind: ErrUnsafe, entry: "res/dev", why: "not a regular file"},
		{name: "duplicate names", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: "res/a", data: []byte("other")})
		}, atOpen: true, kind: ErrUnsafe, entry: "res/a", why: "duplicate"},
		{name: "duplicate manifest", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: ManifestName, data: manifest(t, rdm)})
		}, atOpen: true, kind: ErrUnsafe, entry: ManifestName, why: "duplicate"},
	})
}

func TestHostileSizes(t *testing.T) {
	zeros := bytes.Repeat([]byte{0}, 20<<20)
	run(t, []hostile{
		{name: "zip bomb", pkg: func(t *testing.T) []byte {
			return buildZip(t,
				zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/z", path: "/z", data: zeros, length: -1})},
				zfile{name: "z", data: zeros, method: zip.Deflate})
		}, kind: ErrLimit, entry: `"z"`, why: "compression ratio"},
		{name: "zip bomb spread over small entries", pkg: func(t *testing.T) []byte {
			chunk := zeros[:768<<10]
			var items []item
			var files []zfile
			for i := range 12 {
				p := fmt.Sprintf("z%d", i)
				items = append(items, item{loc: "http://e.x/" + p, path: "/" + p, data: chunk, length: -1})
				files = append(files, zfile{name: p, data: chunk, method: zip.Deflate})
			}
			return buildZip(t, append([]zfile{{name: ManifestName, data: manifest(t, rdm, items...)}}, files...)...)
		}, kind: ErrLimit, entry: "z", why: "package compression ratio"},
		{name: "header says fewer bytes", pkg: func(t *testing.T) []byte {
			b := buildZip(t,
				zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/a", data: []byte(strings.Repeat("x", 1000)), length: noLength})},
				zfile{name: "a", data: []byte(strings.Repeat("x", 1000)), method: zip.Deflate})
			patchCentral(t, b, "a", 24, 4, 10) // uncompressed size
			return b
		}, kind: ErrCorrupt, entry: `"a"`, why: "more bytes than the 10 its ZIP header says"},
		{name: "header says more bytes", pkg: func(t *testing.T) []byte {
			b := buildZip(t,
				zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/a", data: []byte("short"), length: noLength})},
				zfile{name: "a", data: []byte("short"), method: zip.Deflate})
			patchCentral(t, b, "a", 24, 4, 5000)
			return b
		}, kind: ErrCorrupt, entry: `"a"`, why: "its ZIP header says 5000"},
		{name: "entry over MaxEntryBytes", pkg: func(t *testing.T) []byte { return good(t) },
			lim: Limits{MaxEntryBytes: 4}, atOpen: true, kind: ErrLimit, entry: "res/a", why: "MaxEntryBytes"},
		{name: "entry over MaxEntryBytes, header lying", pkg: func(t *testing.T) []byte {
			b := buildZip(t,
				zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/a", data: make([]byte, 300), length: noLength})},
				zfile{name: "a", data: make([]byte, 300), method: zip.Deflate})
			patchCentral(t, b, "a", 24, 4, 100)
			return b
		}, lim: Limits{MaxEntryBytes: 200}, kind: ErrLimit, entry: `"a"`, why: "more than 200 bytes"},
		{name: "too many entries", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: "x1"}, zfile{name: "x2"}, zfile{name: "x3"})
		}, lim: Limits{MaxEntries: 4}, atOpen: true, kind: ErrLimit, why: "5 entries, over MaxEntries (4)"},
		{name: "total over MaxTotalBytes", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: "big", data: make([]byte, 2000)})
		}, lim: Limits{MaxTotalBytes: 1500}, atOpen: true, kind: ErrLimit, entry: "big", why: "MaxTotalBytes"},
		{name: "package over MaxPackageBytes", pkg: func(t *testing.T) []byte { return good(t) },
			lim: Limits{MaxPackageBytes: 100}, atOpen: true, kind: ErrLimit, why: "MaxPackageBytes"},
		{name: "manifest over MaxManifestBytes", pkg: func(t *testing.T) []byte { return good(t) },
			lim: Limits{MaxManifestBytes: 100}, atOpen: true, kind: ErrLimit, entry: ManifestName, why: "over MaxManifestBytes (100)"},
		{name: "manifest over MaxManifestBytes, header lying", pkg: func(t *testing.T) []byte {
			b := buildZip(t, zfile{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", "/res/a", "alpha")), method: zip.Deflate},
				zfile{name: "res/a", data: []byte("alpha")})
			patchCentral(t, b, ManifestName, 24, 4, 50)
			return b
		}, lim: Limits{MaxManifestBytes: 100}, atOpen: true, kind: ErrLimit, entry: ManifestName, why: "more than 100 bytes"},
		{name: "central directory over MaxDirectoryBytes", pkg: func(t *testing.T) []byte {
			var files []zfile
			for i := range 2000 {
				files = append(files, zfile{name: fmt.Sprintf("%s/%04d", strings.Repeat("d", 100), i)})
			}
			return good(t, files...)
		}, lim: Limits{MaxDirectoryBytes: 1 << 10}, atOpen: true, kind: ErrLimit, why: "central directory"},
		{name: "overlapping entries", pkg: func(t *testing.T) []byte {
			b := buildZip(t,
				zfile{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", "/a", "alpha"), res("http://e.x/b", "/b", "alpha"))},
				zfile{name: "a", data: []byte("alpha")}, zfile{name: "b", data: []byte("alpha")})
			// b's directory entry points at a's local header: one copy
			// of the data read twice.
			zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			off, _ := zr.File[1].DataOffset()
			patchCentral(t, b, "b", 42, 4, uint64(off-30-1))
			return b
		}, atOpen: true, kind: ErrLimit, entry: "b", why: "overlaps"},
	})
}

func TestHostileFormat(t *testing.T) {
	run(t, []hostile{
		{name: "encrypted", pkg: func(t *testing.T) []byte {
			return good(t, zfile{name: "secret", data: []byte("x"), edit: func(fh *zip.FileHeader) { fh.Flags |= 0x1 }})
		}, atOpen: true, kind: ErrUnsupported, entry: "secret", why: "encrypted"},
		{name: "bzip2 method", pkg: func(t *testing.T) []byte {
			b := good(t)
			patchCentral(t, b, "res/a", 10, 2, 12)
			patchLocal(t, b, "res/a", 8, 2, 12)
			return b
		}, atOpen: true, kind: ErrUnsupported, entry: "res/a", why: "compression method 12"},
		{name: "not a zip", pkg: func(t *testing.T) []byte { return []byte("<html>not found</html>") },
			atOpen: true, kind: ErrCorrupt, why: "not a readable ZIP"},
		{name: "flipped byte", pkg: func(t *testing.T) []byte {
			b := good(t)
			i := bytes.Index(b, []byte("alpha"))
			b[i] = 'A'
			return b
		}, kind: ErrCorrupt, entry: "res/a", why: "CRC-32"},
		{name: "corrupt deflate stream", pkg: func(t *testing.T) []byte {
			data := []byte(strings.Repeat("deflate me ", 200))
			b := buildZip(t,
				zfile{name: ManifestName, data: manifest(t, rdm, item{loc: "http://e.x/a", path: "/a", data: data, length: -1})},
				zfile{name: "a", data: data, method: zip.Deflate})
			zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			off, _ := zr.File[1].DataOffset()
			for i := off; i < off+8; i++ {
				b[i] = 0xff
			}
			return b
		}, kind: ErrCorrupt, entry: `"a"`, why: "reading"},
		{name: "no manifest", pkg: func(t *testing.T) []byte { return buildZip(t, zfile{name: "res/a", data: []byte("alpha")}) },
			atOpen: true, kind: ErrManifest, entry: ManifestName, why: "no manifest.xml"},
		{name: "manifest in a folder", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: "x/manifest.xml", data: manifest(t, rdm)})
		}, atOpen: true, kind: ErrManifest, why: "no manifest.xml"},
		{name: "manifest is a Resource List", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: manifest(t, resourcesync.CapResourceList)})
		}, atOpen: true, kind: ErrManifest, why: "is a Resource List"},
		{name: "manifest not XML", pkg: func(t *testing.T) []byte {
			return buildZip(t, zfile{name: ManifestName, data: []byte("PK garbage")})
		}, atOpen: true, kind: ErrManifest, entry: ManifestName, why: "reading manifest.xml"},
	})
}

func TestHostileTruncated(t *testing.T) {
	b := buildZip(t,
		zfile{name: ManifestName, data: manifest(t, rdm, res("http://e.x/a", "/a", strings.Repeat("payload ", 300)))},
		zfile{name: "a", data: []byte(strings.Repeat("payload ", 300)), method: zip.Deflate})
	for _, cut := range []int{0, 10, len(b) / 3, len(b) / 2, len(b) - 30, len(b) - 1} {
		path := writeFile(t, b[:cut])
		_, err := readAll(t, path, Options{})
		wantRefusal(t, err, ErrCorrupt, "", "")
	}
	// Data cut out of the middle, the directory intact: the offsets now
	// point past the end or at the wrong bytes.
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	off, _ := zr.File[1].DataOffset()
	mid := append(append([]byte{}, b[:off+10]...), b[off+40:]...)
	if _, err := readAll(t, writeFile(t, mid), Options{}); err == nil {
		t.Error("package with bytes cut from the middle accepted")
	}
}

// run opens each package and asserts the refusal, at Open or at Check,
// and that Entries then never hands out the bad entry as good.
func run(t *testing.T, cases []hostile) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, c.pkg(t))
			opts := Options{Name: "http://source.example/dump1.zip", Limits: c.lim}
			p, err := Open(path, opts)
			if c.atOpen {
				wantRefusal(t, err, c.kind, c.entry, c.why)
				if err == nil {
					p.Close()
				}
				return
			}
			if err != nil {
				t.Fatalf("Open refused what Check should: %v", err)
			}
			defer p.Close()
			wantRefusal(t, p.Check(t.Context()), c.kind, c.entry, c.why)
			_, err = readAll(t, path, opts)
			wantRefusal(t, err, c.kind, c.entry, c.why)
			if !strings.Contains(err.Error(), "http://source.example/dump1.zip") {
				t.Errorf("error %q does not name the package", err)
			}
		})
	}
}
