package resourcesync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// readHeader reads the root's children up to the first entry. Any error in
// the header is fatal: a document whose own metadata is wrong cannot be
// trusted for its entries.
func (r *Reader) readHeader() error {
	seenMD, children := false, 0
	for {
		t, err := r.token()
		if err != nil {
			return r.fatal(err)
		}
		if r.kept > r.lim.MaxEntryBytes && t.kind == tokStart {
			return r.fatal(r.limitErr("MaxEntryBytes", "document header: more than %d bytes", r.lim.MaxEntryBytes))
		}
		switch t.kind {
		case tokStart:
			uri, local, err := r.resolve(t.name)
			if err != nil {
				return r.fatal(err)
			}
			if children++; children > r.lim.MaxChildren {
				return r.fatal(r.limitErr("MaxChildren", "more than %d elements before the first entry", r.lim.MaxChildren))
			}
			switch {
			case uri == SitemapNS && string(local) == r.entry:
				r.pending = true
				return nil
			case uri == SitemapNS && (string(local) == "url" || string(local) == "sitemap"):
				return r.fatal(fmt.Errorf("<%s> in a <%s>", local, r.header.Root))
			case uri == RSNS && string(local) == "md":
				if seenMD {
					return r.fatal(errors.New("second <rs:md> in the document header"))
				}
				seenMD = true
				if err := r.parseMD(t.attrs, &r.header.MD, nil); err != nil {
					return r.fatal(err)
				}
				if err := r.skip(); err != nil {
					return r.fatal(err)
				}
			case uri == RSNS && string(local) == "ln":
				var l Link
				if err := r.parseLink(t.attrs, &l); err != nil {
					return r.fatal(err)
				}
				r.header.Links = append(r.header.Links, l)
				if err := r.skip(); err != nil {
					return r.fatal(err)
				}
			default:
				el, err := r.capture(t, uri)
				if err != nil {
					return r.fatal(err)
				}
				r.header.Extra = append(r.header.Extra, el)
			}
		case tokEnd:
			r.endElement()
			r.done = true // the root closed: a document without entries
			return r.finish()
		}
	}
}

// Next returns the next entry, or io.EOF after the last. A non-fatal
// *Error means only that entry was wrong (a bad datetime, hash, length, a
// value over a length limit): it has been skipped and Next may be called
// again. Any other error is final and is returned again by later calls.
func (r *Reader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.done {
		return nil, io.EOF
	}
	if r.pending {
		r.pending = false
		return r.readEntry()
	}
	for {
		t, err := r.token()
		if err != nil {
			return nil, r.fatal(err)
		}
		switch t.kind {
		case tokStart:
			uri, local, err := r.resolve(t.name)
			if err != nil {
				return nil, r.fatal(err)
			}
			if uri == SitemapNS && string(local) == r.entry {
				return r.readEntry()
			}
			if uri == SitemapNS && (string(local) == "url" || string(local) == "sitemap") {
				return nil, r.fatal(fmt.Errorf("<%s> in a <%s>", local, r.header.Root))
			}
			// Elements between entries have no place in the model; they
			// are read (to check the document) and dropped.
			if err := r.skip(); err != nil {
				return nil, r.fatal(err)
			}
		case tokEnd:
			r.endElement()
			r.done = true
			if err := r.finish(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
	}
}

// finish reads what follows the root element, which may only be comments,
// processing instructions and white space.
func (r *Reader) finish() error {
	for {
		t, err := r.token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return r.fatal(err)
		}
		switch t.kind {
		case tokStart:
			_, local := splitName(t.name)
			return r.fatal(fmt.Errorf("element <%s> after the root element", local))
		case tokText:
			if len(bytes.TrimSpace(t.data)) > 0 {
				return r.fatal(errors.New("text after the root element"))
			}
		}
	}
}

// skip reads up to the end of the element just started.
func (r *Reader) skip() error {
	depth := len(r.stack)
	for {
		t, err := r.token()
		if err != nil {
			return err
		}
		if t.kind == tokEnd {
			r.endElement()
			if len(r.stack) < depth {
				return nil
			}
		}
	}
}

// readEntry reads one url or sitemap element. A wrong value does not stop
// the reading: the rest of the entry is read, so that the next entry can
// be, and the first problem is returned as a non-fatal Error.
func (r *Reader) readEntry() (*Entry, error) {
	r.entries++
	r.kept = 0
	if r.entries > r.lim.MaxEntries {
		return nil, r.fatal(r.limitErr("MaxEntries", "more than %d entries", r.lim.MaxEntries))
	}
	blk := &entryBlock{}
	r.blk = blk
	e := &blk.e
	e.Line = r.Line()
	var bad error
	children := 0
	depth := len(r.stack)
	for {
		t, err := r.token()
		if err != nil {
			return nil, r.fatal(err)
		}
		switch t.kind {
		case tokEnd:
			r.endElement()
			if len(r.stack) < depth {
				if bad == nil && e.Loc == "" {
					bad = valueError{err: errors.New("no <loc>")}
				}
				if bad != nil {
					return nil, r.entryError(bad)
				}
				r.tolerateEntry(e)
				return e, nil
			}
		case tokStart:
			uri, local, err := r.resolve(t.name)
			if err != nil {
				return nil, r.fatal(err)
			}
			if children++; children > r.lim.MaxChildren || r.kept > r.lim.MaxEntryBytes {
				if bad == nil && r.kept > r.lim.MaxEntryBytes {
					bad = r.limitErr("MaxEntryBytes", "more than %d bytes in one entry", r.lim.MaxEntryBytes)
				}
				if bad == nil {
					bad = r.limitErr("MaxChildren", "more than %d elements in one entry", r.lim.MaxChildren)
				}
				if err := r.skip(); err != nil {
					return nil, r.fatal(err)
				}
				continue
			}
			if err := r.entryChild(e, t, uri, local); err != nil {
				var fe *Error
				if errors.As(err, &fe) && fe.Fatal || !isValueErr(err) {
					return nil, r.fatal(err)
				}
				if ve, ok := err.(valueError); ok && ve.line == 0 {
					ve.line = r.Line()
					err = ve
				}
				if bad == nil {
					bad = err
				}
			}
		}
	}
}

// entryBlock holds what most entries need, so that an entry costs one
// allocation instead of four: the Entry, its MD, its length and its first
// hash.
type entryBlock struct {
	e      Entry
	md     MD
	length int64
	hash   [1]Hash
}

// entryError makes the non-fatal Error for the first problem of an entry,
// keeping the line where it was found when it has one.
func (r *Reader) entryError(err error) *Error {
	e, ok := err.(*Error)
	if !ok {
		e = &Error{Line: r.Line(), Err: err}
		if ve, ok := err.(valueError); ok && ve.line > 0 {
			e.Line = ve.line
		}
	}
	e.Err = fmt.Errorf("<%s> %d: %w", r.entry, r.entries, e.Err)
	return e
}

// valueError marks an error in one value of an entry, after which the
// document can still be read.
type valueError struct {
	err  error
	line int
}

func (v valueError) Error() string { return v.err.Error() }
func (v valueError) Unwrap() error { return v.err }

func isValueErr(err error) bool {
	var v valueError
	var e *Error
	return errors.As(err, &v) || (errors.As(err, &e) && !e.Fatal)
}
