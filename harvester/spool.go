package harvester

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// spoolBody is the body of a document being read, which can be moved off
// its connection: spool copies what is left of it to a temporary file and
// closes the response, and reading goes on from the file. A baseline
// spools the documents it has open before it waits for the fetch workers
// (awaitBacklog), since that wait can last far longer than the upstream
// request timeout allows one response to take (a 50,000-entry part read
// at the pace of a polite fetch rate takes well over an hour), and an
// idle connection held meanwhile would be cut by the Source's server
// anyway. The file is at most the document's byte cap.
type spoolBody struct {
	r    io.Reader     // the response, then the file
	body io.ReadCloser // the response, nil once spooled or closed
	file *os.File
	err  error // what ended the copy, returned where the response would have
}

func newSpoolBody(body io.ReadCloser) *spoolBody { return &spoolBody{r: body, body: body} }

func (s *spoolBody) Read(b []byte) (int, error) {
	if s.r == nil {
		return 0, os.ErrClosed
	}
	n, err := s.r.Read(b)
	if errors.Is(err, io.EOF) && s.err != nil {
		return n, s.err
	}
	return n, err
}

// spool moves the rest of the response to a temporary file. A failure to
// create or rewind the file leaves the response where it was; a failure
// reading the response is kept and returned by Read after the bytes that
// came before it, as the response would have.
func (s *spoolBody) spool() error {
	if s.body == nil {
		return nil
	}
	f, err := os.CreateTemp("", "viaduct-document-*")
	if err != nil {
		return fmt.Errorf("spool document: %w", err)
	}
	_, cerr := io.Copy(f, s.body)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("spool document: rewind %s: %w", f.Name(), err)
	}
	s.body.Close()
	s.body, s.file, s.r, s.err = nil, f, f, cerr
	return nil
}

// spooled reports whether the body now comes from a file.
func (s *spoolBody) spooled() bool { return s.file != nil }

// Close closes the response or removes the file.
func (s *spoolBody) Close() error {
	s.r = nil
	if s.body != nil {
		err := s.body.Close()
		s.body = nil
		return err
	}
	if s.file != nil {
		err := s.file.Close()
		os.Remove(s.file.Name())
		s.file = nil
		return err
	}
	return nil
}

// spoolOpen spools every document of the pass still being read; see
// spoolBody. A document that cannot be spooled is read from its response
// as before, and the failure logged.
func (p *pass) spoolOpen() {
	open := p.bodies[:0]
	for _, b := range p.bodies {
		if b.r == nil {
			continue // closed
		}
		open = append(open, b)
		if b.spooled() {
			continue
		}
		if err := b.spool(); err != nil {
			p.log.Warn("could not set a document aside while waiting for the fetch workers; reading it on from the Source", "err", err)
		}
	}
	clear(p.bodies[len(open):])
	p.bodies = open
}
