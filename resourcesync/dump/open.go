package dump

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Options say what a package is expected to be and how to name it.
type Options struct {
	// Name names the package in errors, typically its URI; default the
	// file's path.
	Name string
	// Want is the manifest expected: resourcesync.KindResourceDumpManifest
	// or resourcesync.KindChangeDumpManifest; empty accepts either.
	Want resourcesync.Kind
	// Limits bound the package; zero fields take DefaultLimits.
	Limits Limits
}

// Package is one opened dump package: its ZIP directory and manifest
// header, checked by Open. Its bitstreams are read by Entries, verified as
// they stream. A Package is not safe for concurrent use.
type Package struct {
	name   string
	file   *os.File
	size   int64
	zr     *zip.Reader
	files  map[string]*zip.File
	lim    Limits
	want   resourcesync.Kind
	header *resourcesync.Header
	count  int // manifest entries
	// unlisted counts files the manifest does not list (ignored), with
	// the first few names.
	unlisted      int
	unlistedNames []string

	// Bytes read through Bodies in the current pass, for the package-wide
	// total and ratio limits.
	unz, comp int64
	fr        io.ReadCloser // reused deflate reader
	br        *bufio.Reader // reused buffer under it
}

// Open opens the package at path and checks everything that can be
// checked without reading the bitstreams: the ZIP directory (sizes,
// counts, names, links, encryption, methods, overlaps) and the manifest
// (its kind, every entry's path present once, change order). A ZIP entry
// the manifest does not list is ignored and reported by Unlisted. Any failure is an *Error.
func Open(path string, opts Options) (*Package, error) {
	lim := opts.Limits.withDefaults()
	name := opts.Name
	if name == "" {
		name = path
	}
	p := &Package{name: name, lim: lim, want: opts.Want}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dump package %s: %w", name, err)
	}
	p.file = f
	if err := p.open(); err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

func (p *Package) open() error {
	st, err := p.file.Stat()
	if err != nil {
		return fmt.Errorf("dump package %s: %w", p.name, err)
	}
	p.size = st.Size()
	if p.size > p.lim.MaxPackageBytes {
		return refuse(p.name, "", ErrLimit, nil, "%d bytes, over MaxPackageBytes (%d)", p.size, p.lim.MaxPackageBytes)
	}
	if n := declaredRecords(p.file, p.size); n > int64(p.lim.MaxEntries) {
		return refuse(p.name, "", ErrLimit, nil, "declares %d entries, over MaxEntries (%d)", n, p.lim.MaxEntries)
	}
	br := &budgetReaderAt{r: p.file}
	br.left.Store(p.lim.MaxDirectoryBytes + 128<<10)
	zr, err := zip.NewReader(br, p.size)
	br.left.Store(-1)
	if errors.Is(err, zip.ErrInsecurePath) && zr != nil {
		err = nil // with GODEBUG zipinsecurepath=0; checkFile names the entry
	}
	if err != nil {
		var be *budgetError
		if errors.As(err, &be) {
			return refuse(p.name, "", ErrLimit, nil, "central directory over MaxDirectoryBytes (%d)", p.lim.MaxDirectoryBytes)
		}
		return refuse(p.name, "", ErrCorrupt, err, "not a readable ZIP")
	}
	p.zr = zr
	if len(zr.File) > p.lim.MaxEntries {
		return refuse(p.name, "", ErrLimit, nil, "%d entries, over MaxEntries (%d)", len(zr.File), p.lim.MaxEntries)
	}
	p.files = make(map[string]*zip.File, len(zr.File))
	var declared uint64
	for _, f := range zr.File {
		if err := p.checkFile(f); err != nil {
			return err
		}
		if _, dup := p.files[f.Name]; dup {
			return refuse(p.name, quote(f.Name), ErrUnsafe, nil, "duplicate entry name")
		}
		p.files[f.Name] = f
		declared += f.UncompressedSize64
		if declared > uint64(p.lim.MaxTotalBytes) {
			return refuse(p.name, quote(f.Name), ErrLimit, nil, "entries declare more than MaxTotalBytes (%d)", p.lim.MaxTotalBytes)
		}
	}
	if err := p.checkLayout(p.size); err != nil {
		return err
	}
	return p.checkManifest()
}

// Name is the package's name in errors.
func (p *Package) Name() string { return p.name }

// Header is the manifest's header: its kind, at/completed (Resource Dump
// Manifest) or from/until (Change Dump Manifest), its links.
func (p *Package) Header() *resourcesync.Header { return p.header }

// Len is the number of entries in the manifest.
func (p *Package) Len() int { return p.count }

// Close closes the package file. It does not remove it.
func (p *Package) Close() error {
	if p.fr != nil {
		p.fr.Close()
	}
	return p.file.Close()
}

// inflate returns a deflate reader over r, reusing the package's.
func (p *Package) inflate(r io.Reader) io.Reader {
	if p.fr == nil {
		p.fr = flate.NewReader(r)
		return p.fr
	}
	p.fr.(flate.Resetter).Reset(r, nil)
	return p.fr
}
