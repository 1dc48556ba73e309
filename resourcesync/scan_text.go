package resourcesync

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// Byte classes for the scanner's loops, one table lookup per byte.
const (
	clName    = 1 << iota // may be part of a name (every non-ASCII byte is, to be checked as runes)
	clSpace               // white space between markup
	clText                // ends a run of plain text: < & \r ] >
	clValue               // ends a run of an attribute value: < & \r " '
	clControl             // an ASCII character XML cannot carry
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if b >= 0x80 || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == ':' || b == '.' || b == '-' {
			t[c] |= clName
		}
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' {
			t[c] |= clControl
		}
	}
	for _, b := range []byte(" \t\r\n") {
		t[b] |= clSpace
	}
	for _, b := range []byte("<&\r]>") {
		t[b] |= clText
	}
	for _, b := range []byte("<&\r\"'") {
		t[b] |= clValue
	}
	return t
}()

// space skips white space; a byte must follow.
func (s *scanner) space() error {
	for {
		for s.pos < s.end && byteClass[s.buf[s.pos]]&clSpace != 0 {
			s.pos++
		}
		if s.pos < s.end {
			return nil
		}
		if err := s.must(); err != nil {
			return err
		}
	}
}

// scanName reads a name at pos and returns where it is, from mark; an
// empty name (start == end) is for the caller to report. A name that is
// not an XML name is an error, and so, for element and attribute names
// (qualified), is one with more than one colon.
func (s *scanner) scanName(qualified bool) (int, int, error) {
	start := s.pos - s.mark
	for {
		for s.pos < s.end && byteClass[s.buf[s.pos]]&clName != 0 {
			s.pos++
		}
		if s.pos < s.end {
			break
		}
		if err := s.must(); err != nil {
			return 0, 0, err
		}
	}
	end := s.pos - s.mark
	if start == end {
		return start, end, nil
	}
	name := s.buf[s.mark+start : s.mark+end]
	if !isXMLName(name) {
		return 0, 0, s.errorf("invalid XML name: %s", name)
	}
	if qualified && bytes.Count(name, []byte{':'}) > 1 {
		return start, start, nil
	}
	return start, end, nil
}

// isXMLName checks a name against the Name production of XML 1.0 (fifth
// edition).
func isXMLName(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if i == 0 && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':') {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || !nameRune(r, i == 0) {
			return false
		}
		i += n
	}
	return len(b) > 0
}

// nameRune reports whether a non-ASCII rune may start a name (first) or
// continue one.
func nameRune(r rune, first bool) bool {
	switch {
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFF, r == 0x200C, r == 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return !first && (r == 0xB7 || r >= 0x300 && r <= 0x36F || r == 0x203F || r == 0x2040)
}

// scanText reads character data up to the next '<' or the end of input,
// or a piece of it: a run longer than textPiece is handed on in pieces, cut
// between characters, so that the window and the text buffer stay small
// whatever its length. carry is the number of "]" that ended the previous
// piece, for the "]]>" check across the cut.
func (s *scanner) scanText(carry int) error {
	var err error
	if s.text, err = s.chars(s.text[:0], 0, carry); err != nil {
		return err
	}
	s.tok.kind = tokText
	s.tok.data = s.text
	return s.checkChars(s.text)
}

// scanCDATA reads a CDATA section, its "<![CDATA[" read.
func (s *scanner) scanCDATA() error {
	out := s.text[:0]
	for {
		i := bytes.IndexByte(s.buf[s.pos:s.end], '\r')
		j := bytes.Index(s.buf[s.pos:s.end], []byte("]]>"))
		switch {
		case j >= 0 && (i < 0 || j < i):
			out = append(out, s.buf[s.pos:s.pos+j]...)
			s.pos += j + 3
			s.text = out
			s.tok.kind = tokText
			s.tok.data = out
			return s.checkChars(out)
		case i >= 0:
			out = append(out, s.buf[s.pos:s.pos+i]...)
			out = append(out, '\n')
			s.pos += i + 1
			if s.need() && s.buf[s.pos] == '\n' {
				s.pos++
			}
		default:
			// Keep a possible "]]" at the end for the next search.
			n := max(s.end-s.pos-2, 0)
			out = append(out, s.buf[s.pos:s.pos+n]...)
			s.pos += n
			if !s.more() {
				s.text = out
				return s.errorf("unexpected end of input in CDATA section")
			}
		}
	}
}

// chars decodes text (quote 0) or a quoted attribute value (quote ' or ")
// onto out: references resolved, line ends normalised. Text ends before
// '<' or at the end of input, or after textPiece bytes at the end of the
// window (see scanText), and may not hold "]]>"; a value ends at its
// quote, which is consumed, and may not hold '<'. brackets is the number
// of "]" just read before the text.
func (s *scanner) chars(out []byte, quote byte, brackets int) ([]byte, error) {
	stop := uint8(clText)
	if quote != 0 {
		stop = clValue
	}
	for {
		i := s.pos
		for i < s.end && byteClass[s.buf[i]]&stop == 0 {
			i++
		}
		if i > s.pos {
			out = append(out, s.buf[s.pos:i]...)
			s.pos = i
			brackets = 0
		}
		if s.pos >= s.end {
			if quote == 0 && s.end-s.mark >= min(textPiece, len(s.buf)/2) {
				return s.cutText(out, brackets), nil
			}
			if s.more() {
				continue
			}
			if quote == 0 && s.rerr == io.EOF {
				return out, nil
			}
			return out, s.must()
		}
		c := s.buf[s.pos]
		switch c {
		case '<':
			if quote != 0 {
				return out, s.errorf("unescaped < inside quoted string")
			}
			return out, nil
		case '&':
			s.pos++
			var err error
			if out, err = s.reference(out); err != nil {
				return out, err
			}
			brackets = 0
			continue
		case '\r':
			out = append(out, '\n')
			s.pos++
			if s.need() && s.buf[s.pos] == '\n' {
				s.pos++
			}
			brackets = 0
			continue
		case ']':
			brackets++
		case '>':
			if brackets >= 2 {
				return out, s.errorf("unescaped ]]> not in CDATA section")
			}
			brackets = 0
		default: // the quote, or the other quote
			if c == quote {
				s.pos++
				return out, nil
			}
			brackets = 0
		}
		out = append(out, c)
		s.pos++
	}
}

// cutText ends a piece of text at the end of the window, before the bytes
// of a character the window holds only the start of, which begin the next
// piece.
func (s *scanner) cutText(out []byte, brackets int) []byte {
	j := len(out) - 1
	for j >= 0 && j > len(out)-utf8.UTFMax && out[j]&0xC0 == 0x80 {
		j--
	}
	if j >= 0 && out[j] >= 0xC0 && !utf8.FullRune(out[j:]) {
		k := len(out) - j
		s.pos -= k
		out = out[:j]
		brackets = 0
	}
	s.carry = brackets
	return out
}
