package resourcesync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// tokKind is what a token is.
type tokKind uint8

const (
	tokStart tokKind = iota + 1
	tokEnd
	tokText
	tokComment
	tokPI
)

// token is one piece of a document as the scanner reads it. Its slices
// point into the scanner's buffers and are valid until the next call, so
// that reading a document allocates nothing per token.
type token struct {
	kind  tokKind
	name  []byte // element name as written (prefix:local), or the PI target
	attrs []attr // of a start tag, as written
	data  []byte // text (entities resolved), comment or PI content
}

// attr is one attribute of a start tag: its name as written and its value
// with references resolved.
type attr struct {
	name  []byte
	value []byte
}

// tokenSource is what Reader reads tokens from. The scanner is the one
// used; the tests add one over encoding/xml to check the scanner against.
type tokenSource interface {
	next() (*token, error) // io.EOF after the last token
	line() int             // line of the end of the last token
}

var _ tokenSource = (*scanner)(nil)

// scanner reads XML from a window over its input, for the subset of XML
// that Sitemaps are: declaration, comments, processing instructions,
// CDATA, elements with attributes, character and predefined entity
// references. It checks well-formedness the way encoding/xml's RawToken
// does (matching of end tags and namespaces are the Reader's), and refuses
// every <!DOCTYPE or other declaration. It is hand-written because
// encoding/xml allocates for every token and reads byte by byte, which
// alone is slower than the whole reader needs to be.
type scanner struct {
	in   io.Reader
	buf  []byte
	pos  int   // next byte to read
	end  int   // end of the bytes read
	mark int   // start of the current token: more keeps buf[mark:]
	rerr error // from in, once buf[pos:end] is used up
	ln   int   // line at mark
	fail error // sticky syntax error

	tok     token
	closing bool   // the last start tag was empty: its end tag comes next
	text    []byte // decoded text of the current token
	vals    []byte // decoded attribute values of the current start tag
	offs    []int  // per attribute: name start, name end (from mark), value start, value end
	nameOff [2]int // element name, from mark
	maxTok  int    // bytes one token may span in the window (Limits.MaxTokenLen)
	carry   int    // "]" ending the last piece of a run of text split by scanText
}

// textPiece is the size past which a run of text is handed to the reader
// in pieces (or half the window, when smaller), so that text (white space
// between elements above all) never makes the window grow.
const textPiece = 32 << 10

func newScanner(in io.Reader, maxTok int) *scanner {
	return &scanner{in: in, buf: make([]byte, min(64<<10, max(maxTok, 4<<10))), ln: 1, maxTok: maxTok}
}

func (s *scanner) line() int { return s.ln }

// posLine is the line at pos, for errors inside a token.
func (s *scanner) posLine() int {
	return s.ln + bytes.Count(s.buf[s.mark:min(s.pos, s.end)], []byte{'\n'})
}

func (s *scanner) next() (*token, error) {
	if s.fail != nil {
		return nil, s.fail
	}
	if s.closing {
		s.closing = false
		s.tok.kind = tokEnd
		s.tok.attrs = s.tok.attrs[:0]
		return &s.tok, nil
	}
	s.mark = s.pos
	if !s.need() {
		if s.rerr == io.EOF {
			return nil, io.EOF
		}
		s.fail = s.rerr
		return nil, s.rerr
	}
	var err error
	carry := s.carry
	s.carry = 0
	if s.buf[s.pos] != '<' {
		err = s.scanText(carry)
	} else {
		s.pos++
		err = s.scanMarkup()
	}
	if err != nil {
		s.fail = err
		return nil, err
	}
	s.ln += bytes.Count(s.buf[s.mark:s.pos], []byte{'\n'})
	return &s.tok, nil
}

// need makes sure buf[pos] can be read, reading more input when needed;
// false means the input has ended (rerr says how).
func (s *scanner) need() bool {
	for s.pos >= s.end {
		if !s.more() {
			return false
		}
	}
	return true
}

// more reads more input into the window, keeping the current token's
// bytes (from mark on) and growing the window when the token fills it, up
// to maxTok: a longer token is a MaxTokenLen error, so that the window
// never holds more than twice that.
func (s *scanner) more() bool {
	if s.rerr != nil {
		return false
	}
	if s.mark > 0 {
		n := copy(s.buf, s.buf[s.mark:s.end])
		s.pos -= s.mark
		s.end = n
		s.mark = 0
	}
	if s.end == len(s.buf) {
		if s.end >= s.maxTok {
			s.rerr = &limitError{limit: "MaxTokenLen", max: int64(s.maxTok), what: "one tag, comment, processing instruction or CDATA section"}
			return false
		}
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for i := 0; i < 100; i++ {
		n, err := s.in.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.rerr = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
	s.rerr = io.ErrNoProgress
	return false
}

// must is need at a place where the input may not end.
func (s *scanner) must() error {
	if s.need() {
		return nil
	}
	if s.rerr == io.EOF {
		return s.errorf("unexpected end of input")
	}
	return s.rerr
}

// errorf is a fatal Error at the current line.
func (s *scanner) errorf(format string, args ...any) error {
	return &Error{Line: s.posLine(), Fatal: true, Err: fmt.Errorf("XML syntax error: "+format, args...)}
}

// switchInput decodes the rest of the document from charset enc, as the
// XML declaration asks.
func (s *scanner) switchInput(enc string) error {
	rest := bytes.Clone(s.buf[s.pos:s.end])
	var tail io.Reader = s.in
	if s.rerr != nil {
		tail = errReader{s.rerr}
	}
	in, err := charsetReader(enc, io.MultiReader(bytes.NewReader(rest), tail))
	if err != nil {
		return &Error{Line: s.posLine(), Fatal: true, Err: fmt.Errorf("XML declaration: %w", err)}
	}
	s.in, s.end, s.rerr = in, s.pos, nil
	return nil
}

// errReader gives back a read error already met.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

var errNoName = errors.New("no name")
