package resourcesync

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Parts creates the documents of a list too big for one: part n (1, 2, ...)
// or, for n == 0, the index. uri is where the document will be published;
// it goes into the index's entries and the parts' rel="index" links. One
// method, so that parts can go to files, blobs or an HTTP upload alike.
type Parts interface {
	Create(n int) (w io.WriteCloser, uri string, err error)
}

// SplitConfig bounds the parts of a split list. Zero fields take the
// defaults, the community limits the spec follows.
type SplitConfig struct {
	// MaxEntries is the most entries in one part; default 50,000.
	MaxEntries int
	// MaxBytes is the largest part, in bytes; default 50,000,000 (50 MB).
	MaxBytes int64
	// TempDir holds the first part while it is not yet known whether an
	// index is needed; default os.TempDir().
	TempDir string
}

// SplitResult says what a SplitWriter published.
type SplitResult struct {
	// URI is the document to link to: the index when there is one, else
	// the single part.
	URI string
	// Index tells whether the list was split (URI is then a sitemapindex
	// with the same capability).
	Index bool
	// Parts are the URIs of the parts, in order.
	Parts   []string
	Entries int
}

// SplitWriter writes a list in parts of at most MaxEntries entries and
// MaxBytes bytes, and the index of those parts. Every part carries the
// header it was given (its rel="up" link included) and, when there is an
// index, a rel="index" link to it.
//
// Whether an index is needed is known only when the first part overflows,
// but the first part's header must already say so. So the first part's
// entries wait in a temporary file (disk, not memory) until either a
// second part starts, and the index is created and the first part written
// with its index link, or Close finds that one part was enough, and it is
// written without one and no index is made.
type SplitWriter struct {
	parts  Parts
	h      Header
	cfg    SplitConfig
	enc    encoder
	buf    []byte
	spool  *os.File
	spoolw *bufio.Writer

	cur      *Writer // part being written, from the second part on
	curClose io.Closer
	curN     int   // entries in the current part (spooled or not)
	curBytes int64 // bytes of the current part's entries
	headLen  int64 // bytes of a part's header and footer

	index      *Writer
	indexClose io.Closer
	indexURI   string
	res        SplitResult
	from       time.Time // start of the current part's changes
	last       time.Time // change time of the last entry written
	err        error
}

// reserve is room left in the first part for the rel="index" link its
// header will carry if the list is split.
const reserve = 4096

// NewSplitWriter starts a split list with header h (Root is ignored: parts
// are urlsets, or sitemapindexes when h.Root is SitemapIndex, and the
// index is always a sitemapindex).
func NewSplitWriter(p Parts, h *Header, cfg SplitConfig) (*SplitWriter, error) {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 50_000
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 50_000_000
	}
	s := &SplitWriter{parts: p, h: *h, cfg: cfg, from: h.MD.From}
	s.h.Links = withoutRel(h.Links, "index")
	s.enc.init(h.RootAttrs)
	f, err := os.CreateTemp(cfg.TempDir, "resourcesync-part-*.xml")
	if err != nil {
		return nil, fmt.Errorf("creating the spool for the first part: %w", err)
	}
	s.spool, s.spoolw = f, bufio.NewWriterSize(f, 64<<10)
	s.headLen = int64(len(s.enc.appendHeader(nil, &s.h))) + int64(len("</sitemapindex>\n")) + reserve
	return s, nil
}

// Write adds an entry to the current part, starting a new part first when
// it would not fit.
func (s *SplitWriter) Write(e *Entry) error {
	if s.err != nil {
		return s.err
	}
	if e.Loc == "" {
		return errors.New("resourcesync: entry without loc")
	}
	s.buf = s.enc.appendEntry(s.buf[:0], e, s.h.Root)
	n := int64(len(s.buf))
	if s.headLen+n > s.cfg.MaxBytes {
		return s.fail(fmt.Errorf("entry %s: %d bytes, more than a part may hold", e.Loc, n))
	}
	if s.curN >= s.cfg.MaxEntries || s.headLen+s.curBytes+n > s.cfg.MaxBytes {
		if err := s.nextPart(); err != nil {
			return s.fail(err)
		}
	}
	var err error
	if s.cur == nil {
		_, err = s.spoolw.Write(s.buf)
	} else {
		err = s.cur.writeRaw(s.buf)
	}
	if err != nil {
		return s.fail(fmt.Errorf("writing part %d: %w", len(s.res.Parts)+1, err))
	}
	s.curN++
	s.curBytes += n
	s.res.Entries++
	s.last = e.ChangeTime()
	return nil
}

func (s *SplitWriter) fail(err error) error {
	s.err = err
	return err
}

// nextPart ends the current part and starts the next one; the first time,
// it creates the index.
func (s *SplitWriter) nextPart() error {
	if s.index == nil {
		iw, uri, err := s.parts.Create(0)
		if err != nil {
			return fmt.Errorf("creating the index: %w", err)
		}
		ih := s.h
		ih.Root = SitemapIndex
		s.index, err = NewWriter(iw, &ih)
		if err != nil {
			iw.Close()
			return fmt.Errorf("writing the index header: %w", err)
		}
		s.indexClose, s.indexURI, s.res.Index = iw, uri, true
		s.h.Links = append(append([]Link(nil), s.h.Links...), Link{Rel: "index", Href: uri})
		if err := s.flushSpool(); err != nil {
			return err
		}
	} else if err := s.endPart(); err != nil {
		return err
	}
	w, uri, err := s.parts.Create(len(s.res.Parts) + 1)
	if err != nil {
		return fmt.Errorf("creating part %d: %w", len(s.res.Parts)+1, err)
	}
	s.cur, err = NewWriter(w, &s.h)
	if err != nil {
		w.Close()
		return fmt.Errorf("writing the header of part %d: %w", len(s.res.Parts)+1, err)
	}
	s.curClose = w
	s.res.Parts = append(s.res.Parts, uri)
	s.curN, s.curBytes = 0, 0
	s.headLen = int64(len(s.enc.appendHeader(nil, &s.h))) + int64(len("</sitemapindex>\n"))
	return nil
}

// flushSpool writes the first part from the spool, with the header as it
// now stands, and removes the spool.
func (s *SplitWriter) flushSpool() error {
	defer s.dropSpool()
	if err := s.spoolw.Flush(); err != nil {
		return fmt.Errorf("spooling the first part: %w", err)
	}
	if _, err := s.spool.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewinding the first part's spool: %w", err)
	}
	w, uri, err := s.parts.Create(1)
	if err != nil {
		return fmt.Errorf("creating part 1: %w", err)
	}
	s.res.Parts = append(s.res.Parts, uri)
	pw, err := NewWriter(w, &s.h)
	if err == nil {
		_, err = pw.bw.ReadFrom(s.spool)
	}
	s.cur, s.curClose = pw, w
	if err != nil {
		w.Close()
		s.cur = nil
		return fmt.Errorf("writing part 1: %w", err)
	}
	if s.index != nil {
		return s.endPart()
	}
	return nil
}

func (s *SplitWriter) dropSpool() {
	if s.spool != nil {
		s.spool.Close()
		os.Remove(s.spool.Name())
		s.spool = nil
	}
}

// endPart closes the current part and lists it in the index.
func (s *SplitWriter) endPart() error {
	n := len(s.res.Parts)
	err := s.cur.Close()
	if cerr := s.curClose.Close(); err == nil {
		err = cerr
	}
	s.cur = nil
	if err != nil {
		return fmt.Errorf("closing part %d: %w", n, err)
	}
	if s.index == nil {
		return nil
	}
	e := &Entry{Loc: s.res.Parts[n-1], MD: s.partMD()}
	if err := s.index.Write(e); err != nil {
		return fmt.Errorf("listing part %d in the index: %w", n, err)
	}
	return nil
}

// partMD describes a part in the index: the snapshot times of a Resource
// List or Dump, or the interval of changes of a Change List or Dump.
func (s *SplitWriter) partMD() *MD {
	switch s.h.MD.Capability {
	case CapChangeList, CapChangeDump:
		md := &MD{From: s.from, Until: s.last}
		s.from = s.last
		return md
	}
	return &MD{At: s.h.MD.At, Completed: s.h.MD.Completed}
}

// Close ends the last part and the index, if any, and says what was
// written. A list without entries is one empty part.
func (s *SplitWriter) Close() (*SplitResult, error) {
	if s.err != nil {
		if s.err != errClosed {
			s.abort()
		}
		return nil, s.err
	}
	if s.index == nil {
		if err := s.flushSpool(); err != nil {
			return nil, s.fail(err)
		}
		if err := s.endPart(); err != nil {
			return nil, s.fail(err)
		}
		s.res.URI = s.res.Parts[0]
		s.err = errClosed
		return &s.res, nil
	}
	// The last part's interval ends where the list's does.
	s.last = s.h.MD.Until
	if err := s.endPart(); err != nil {
		return nil, s.fail(err)
	}
	err := s.index.Close()
	if cerr := s.indexClose.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, s.fail(fmt.Errorf("closing the index: %w", err))
	}
	s.res.URI = s.indexURI
	s.err = errClosed
	return &s.res, nil
}

// abort releases what a failed SplitWriter holds.
func (s *SplitWriter) abort() {
	s.dropSpool()
	if s.curClose != nil {
		s.curClose.Close()
	}
	if s.indexClose != nil {
		s.indexClose.Close()
	}
}

func withoutRel(links []Link, rel string) []Link {
	var out []Link
	for _, l := range links {
		if l.Rel != rel {
			out = append(out, l)
		}
	}
	return out
}

var errClosed = errors.New("resourcesync: SplitWriter used after Close")
