package resourcesync

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// charsetReader lets the reader take the two non-UTF-8 encodings that
// Sitemaps in the wild declare: US-ASCII (a subset of UTF-8) and
// ISO-8859-1. Anything else is refused with the name of the encoding.
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
		return &latin1Reader{r: bufio.NewReader(in)}, nil
	}
	return nil, fmt.Errorf("encoding %q: only UTF-8, US-ASCII and ISO-8859-1 are read", label)
}

// latin1Reader turns ISO-8859-1 into UTF-8: every byte is the code point
// of the same value.
type latin1Reader struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.pending) > 0 {
			c := copy(p[n:], l.pending)
			l.pending = l.pending[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		var enc [2]byte
		utf8.EncodeRune(enc[:], rune(b))
		l.pending = append(l.pending[:0], enc[:]...)
	}
	return n, nil
}
