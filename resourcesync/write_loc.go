package resourcesync

import "errors"

// WriteLoc writes e as Write does, with loc (escaped as Write escapes
// e.Loc) in place of e.Loc, which it ignores. A list of a million entries
// whose URIs are built in a buffer the caller reuses then writes each one
// without making a string of it first.
func (w *Writer) WriteLoc(loc []byte, e *Entry) error {
	if w.err != nil {
		return w.err
	}
	if w.close {
		return errors.New("resourcesync: Write after Close")
	}
	if len(loc) == 0 {
		return errors.New("resourcesync: entry without loc")
	}
	w.buf = appendEntryStart(w.buf[:0], w.root)
	w.buf = appendEscapedBytes(w.buf, loc, false)
	w.buf = w.enc.appendEntryRest(w.buf, e, w.root)
	return w.flushBuf()
}
