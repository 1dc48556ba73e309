package dump

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Config bounds the packages a Writer makes. Zero fields take defaults.
type Config struct {
	// MaxEntries is the most manifest entries (bitstreams, and deletions
	// in a Change Dump) in one package; default 50,000, the spec's list
	// size, so that the manifest is a valid Sitemap.
	MaxEntries int
	// MaxBytes is the most bitstream bytes (uncompressed) in one package;
	// default 1,000,000,000. A single bitstream larger than that gets a
	// package of its own.
	MaxBytes int64
	// Dir is the directory under which path attributes are derived, for
	// entries without one; default "resources" for a Resource Dump and
	// "changes" for a Change Dump, as in the spec's examples.
	Dir string
	// TempDir holds the manifest's entries until Close; default
	// os.TempDir().
	TempDir string
	// ManifestCopy, when set, receives a copy of manifest.xml at Close,
	// to be published beside the package (rel="contents").
	ManifestCopy io.Writer
}

// ErrFull is returned by Add when the entry would take the package past
// MaxEntries or MaxBytes: nothing was written, the package can be closed
// and the entry added to the next one.
var ErrFull = errors.New("dump package full")

// Writer writes one dump package: each bitstream as it is added, then
// manifest.xml last, at Close. The spec wants manifest.xml in the package,
// not first; a ZIP's central directory is at its end, so a reader finds
// the manifest wherever it is, and writing it last lets the bitstreams
// stream through without being held anywhere. Until Close the manifest's
// entries wait in a temporary file.
type Writer struct {
	zw      *zip.Writer
	h       *resourcesync.Header
	cfg     Config
	change  bool
	tmp     *os.File
	mw      *resourcesync.Writer
	hdrLen  int64
	entries int
	bytes   int64
	paths   map[string]struct{}
	last    resourcesync.Entry // previous change, for the order check
	err     error
	closed  bool
}

// NewWriter starts a package on w whose manifest has header h, a Resource
// Dump Manifest or a Change Dump Manifest. h is written at Close, so the
// caller may still set Completed or Until then.
func NewWriter(w io.Writer, h *resourcesync.Header, cfg Config) (*Writer, error) {
	kind := h.Kind()
	if kind != resourcesync.KindResourceDumpManifest && kind != resourcesync.KindChangeDumpManifest || h.Root != resourcesync.URLSet {
		return nil, fmt.Errorf("dump writer: header is a %s, want a Resource or Change Dump Manifest", kind)
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = resourcesync.SitemapMaxEntries
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1_000_000_000
	}
	wr := &Writer{zw: zip.NewWriter(w), h: h, cfg: cfg, change: kind == resourcesync.KindChangeDumpManifest, paths: map[string]struct{}{}}
	if wr.cfg.Dir == "" {
		wr.cfg.Dir = "resources"
		if wr.change {
			wr.cfg.Dir = "changes"
		}
	}
	tmp, err := os.CreateTemp(cfg.TempDir, "dump-manifest-*.xml")
	if err != nil {
		return nil, fmt.Errorf("dump writer: %w", err)
	}
	wr.tmp = tmp
	if wr.mw, err = resourcesync.NewWriter(tmp, h); err != nil {
		wr.discard()
		return nil, fmt.Errorf("dump writer: manifest: %w", err)
	}
	wr.hdrLen = wr.mw.Written()
	return wr, nil
}

// Len reports what the package holds so far: manifest entries and
// bitstream bytes.
func (w *Writer) Len() (entries int, bytes int64) { return w.entries, w.bytes }

// discard removes the temporary manifest.
func (w *Writer) discard() {
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}
