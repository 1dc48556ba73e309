package resourcesync

import (
	"errors"
	"fmt"
)

// Limits bounds every input, so that no document, however large or hostile,
// makes the reader use unbounded memory or time. A zero field means the
// default.
type Limits struct {
	MaxBytes        int64 // bytes of the document as read (compressed), default 64 MiB
	MaxDecompressed int64 // bytes after gunzip, default 256 MiB
	MaxEntries      int   // default 1,000,000 (50,000 is the spec's list size, Indexes and Sources in the wild exceed it)
	MaxAttrLen      int   // length of any attribute or text value, default 64 KiB
	MaxURILen       int   // loc and href, default 8 KiB
	MaxDepth        int   // element nesting, default 32
	MaxChildren     int   // child elements of one entry, and of the root before the first entry (rs:ln, extensions...), default 1,024
	// MaxTokenLen is the length, as read, of any one tag with its
	// attributes, comment, processing instruction or CDATA section, default
	// 256 KiB. Text is read in pieces and has no such bound: a run of white
	// space of any length costs no memory.
	MaxTokenLen int
	// MaxEntryBytes is what one entry, or the header, may keep: the bytes
	// of its tags (names and attribute values) and of the text of its
	// extension elements together, default 1 MiB. An entry past it is
	// refused (the rest of the document is read); a header past it, or
	// names of open elements and namespace declarations in scope past it,
	// end the document.
	MaxEntryBytes int
}

// DefaultLimits returns the limits a harvester of public Sources can live
// with: far beyond what the spec's 50,000 entries and 50 MB need, far below
// what would hurt the machine.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:        64 << 20,
		MaxDecompressed: 256 << 20,
		MaxEntries:      1_000_000,
		MaxAttrLen:      64 << 10,
		MaxURILen:       8 << 10,
		MaxDepth:        32,
		MaxChildren:     1024,
		MaxTokenLen:     256 << 10,
		MaxEntryBytes:   1 << 20,
	}
}

// withDefaults fills the zero fields of l from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxDecompressed <= 0 {
		l.MaxDecompressed = d.MaxDecompressed
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	if l.MaxAttrLen <= 0 {
		l.MaxAttrLen = d.MaxAttrLen
	}
	if l.MaxURILen <= 0 {
		l.MaxURILen = d.MaxURILen
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxChildren <= 0 {
		l.MaxChildren = d.MaxChildren
	}
	if l.MaxTokenLen <= 0 {
		l.MaxTokenLen = d.MaxTokenLen
	}
	if l.MaxEntryBytes <= 0 {
		l.MaxEntryBytes = d.MaxEntryBytes
	}
	return l
}

// Error is what the reader returns for anything wrong with a document:
// where (the line) and what. Callers branch on Fatal and Limit with
// errors.As.
type Error struct {
	Line  int    // line in the (decompressed) document
	Limit string // the Limits field name when a limit was exceeded, else ""
	Fatal bool   // false: only the current entry was bad (a bad datetime, hash, length...): Next may be called again
	Err   error
}

func (e *Error) Error() string {
	if e.Limit != "" {
		return fmt.Sprintf("line %d: limit %s exceeded: %v", e.Line, e.Limit, e.Err)
	}
	return fmt.Sprintf("line %d: %v", e.Line, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotSitemap is wrapped by the fatal Error for input that is not a
// Sitemap document at all (HTML, another XML vocabulary, a wrong
// namespace), so that discovery can tell "not a list" from "a broken list".
var ErrNotSitemap = errors.New("not a Sitemap document")

// limitError is returned by the byte-counting readers when a size limit is
// passed; the reader turns it into an Error naming the limit.
type limitError struct {
	limit string
	max   int64
	what  string // what was too long, when not the whole input
}

func (e *limitError) Error() string {
	if e.what != "" {
		return fmt.Sprintf("%s of more than %d bytes (%s)", e.what, e.max, e.limit)
	}
	return fmt.Sprintf("more than %d bytes (%s)", e.max, e.limit)
}
