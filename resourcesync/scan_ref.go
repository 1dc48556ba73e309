package resourcesync

import "unicode/utf8"

// reference resolves a character or predefined entity reference, its '&'
// read, onto out. Anything else after '&' is an error: a document cannot
// declare entities of its own here.
func (s *scanner) reference(out []byte) ([]byte, error) {
	start := s.pos
	if err := s.must(); err != nil {
		return out, err
	}
	if s.buf[s.pos] == '#' {
		s.pos++
		if err := s.must(); err != nil {
			return out, err
		}
		base := rune(10)
		if s.buf[s.pos] == 'x' {
			base = 16
			s.pos++
		}
		var v rune
		n := 0
		for {
			if err := s.must(); err != nil {
				return out, err
			}
			d := digitVal(s.buf[s.pos])
			if d < 0 || d >= base {
				break
			}
			if v <= utf8.MaxRune {
				v = v*base + d
			}
			n++
			s.pos++
		}
		if s.buf[s.pos] != ';' || n == 0 || v > utf8.MaxRune {
			return out, s.badRef(start)
		}
		s.pos++
		return utf8.AppendRune(out, v), nil
	}
	nameStart := s.pos - s.mark
	for {
		for s.pos < s.end && byteClass[s.buf[s.pos]]&clName != 0 {
			s.pos++
		}
		if err := s.must(); err != nil {
			return out, err
		}
		if s.pos < s.end && byteClass[s.buf[s.pos]]&clName == 0 {
			break
		}
	}
	name := s.buf[s.mark+nameStart : s.pos]
	if s.buf[s.pos] != ';' {
		return out, s.badRef(start)
	}
	var c byte
	switch string(name) {
	case "lt":
		c = '<'
	case "gt":
		c = '>'
	case "amp":
		c = '&'
	case "apos":
		c = '\''
	case "quot":
		c = '"'
	default:
		return out, s.badRef(start)
	}
	s.pos++
	return append(out, c), nil
}

func (s *scanner) badRef(start int) error {
	ref := s.buf[max(start-1, s.mark):min(s.pos+1, s.end)]
	if len(ref) > 40 {
		ref = ref[:40]
	}
	return s.errorf("invalid character or entity reference %q", ref)
}

func digitVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// checkChars refuses, in decoded text or a value, invalid UTF-8 and
// characters outside XML's Char production.
func (s *scanner) checkChars(b []byte) error {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if byteClass[c]&clControl != 0 {
				return s.errorf("illegal character code %U", rune(c))
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return s.errorf("invalid UTF-8")
		}
		if r >= 0xD800 && r <= 0xDFFF || r == 0xFFFE || r == 0xFFFF {
			return s.errorf("illegal character code %U", r)
		}
		i += n
	}
	return nil
}
