package resourcesync

import (
	"bytes"
	"strings"
)

// scanMarkup reads what follows a '<'.
func (s *scanner) scanMarkup() error {
	if err := s.must(); err != nil {
		return err
	}
	switch s.buf[s.pos] {
	case '/':
		s.pos++
		return s.scanEnd()
	case '?':
		s.pos++
		return s.scanPI()
	case '!':
		s.pos++
		return s.scanBang()
	}
	return s.scanStart()
}

// scanStart reads a start tag, its '<' read.
func (s *scanner) scanStart() error {
	ns, ne, err := s.scanName(true)
	if err != nil {
		return err
	}
	if ns == ne {
		return s.errorf("expected element name after <")
	}
	s.nameOff = [2]int{ns, ne}
	s.offs = s.offs[:0]
	s.vals = s.vals[:0]
	empty := false
	for {
		if err := s.space(); err != nil {
			return err
		}
		c := s.buf[s.pos]
		if c == '/' {
			s.pos++
			if err := s.must(); err != nil {
				return err
			}
			if s.buf[s.pos] != '>' {
				return s.errorf("expected /> in element")
			}
			s.pos++
			empty = true
			break
		}
		if c == '>' {
			s.pos++
			break
		}
		as, ae, err := s.scanName(true)
		if err != nil {
			return err
		}
		if as == ae {
			return s.errorf("expected attribute name in element")
		}
		if err := s.space(); err != nil {
			return err
		}
		if s.buf[s.pos] != '=' {
			return s.errorf("attribute name without = in element")
		}
		s.pos++
		if err := s.space(); err != nil {
			return err
		}
		q := s.buf[s.pos]
		if q != '"' && q != '\'' {
			return s.errorf("unquoted or missing attribute value in element")
		}
		s.pos++
		vs := len(s.vals)
		if s.vals, err = s.chars(s.vals, q, 0); err != nil {
			return err
		}
		if err := s.checkChars(s.vals[vs:]); err != nil {
			return err
		}
		s.offs = append(s.offs, as, ae, vs, len(s.vals))
	}
	t := &s.tok
	t.kind = tokStart
	t.name = s.buf[s.mark+s.nameOff[0] : s.mark+s.nameOff[1]]
	t.attrs = t.attrs[:0]
	for i := 0; i < len(s.offs); i += 4 {
		o := s.offs[i : i+4]
		t.attrs = append(t.attrs, attr{name: s.buf[s.mark+o[0] : s.mark+o[1]], value: s.vals[o[2]:o[3]:o[3]]})
	}
	s.closing = empty
	return nil
}

// scanEnd reads an end tag, its "</" read.
func (s *scanner) scanEnd() error {
	ns, ne, err := s.scanName(true)
	if err != nil {
		return err
	}
	if ns == ne {
		return s.errorf("expected element name after </")
	}
	if err := s.space(); err != nil {
		return err
	}
	if s.buf[s.pos] != '>' {
		return s.errorf("invalid characters between </%s and >", s.buf[s.mark+ns:s.mark+ne])
	}
	s.pos++
	s.tok.kind = tokEnd
	s.tok.name = s.buf[s.mark+ns : s.mark+ne]
	s.tok.attrs = s.tok.attrs[:0]
	return nil
}

// scanPI reads a processing instruction, its "<?" read. The XML
// declaration is one too: its version is checked and its encoding, when
// not UTF-8, switches the input, as encoding/xml does.
func (s *scanner) scanPI() error {
	ns, ne, err := s.scanName(false)
	if err != nil {
		return err
	}
	if ns == ne {
		return s.errorf("expected target name after <?")
	}
	if err := s.space(); err != nil {
		return err
	}
	ds := s.pos - s.mark
	end, err := s.find("?>")
	if err != nil {
		return err
	}
	s.pos = end + 2
	s.tok.kind = tokPI
	s.tok.name = s.buf[s.mark+ns : s.mark+ne]
	s.tok.data = s.buf[s.mark+ds : end]
	if string(s.tok.name) != "xml" {
		return nil
	}
	content := string(s.tok.data)
	if v := declParam("version", content); v != "" && v != "1.0" {
		return s.errorf("unsupported XML version %q; only version 1.0 is supported", v)
	}
	if enc := declParam("encoding", content); enc != "" && !strings.EqualFold(enc, "utf-8") {
		return s.switchInput(enc)
	}
	return nil
}

// declParam finds param="value" (or with single quotes) in the content of
// an XML declaration. Like encoding/xml, it looks for the first "param="
// followed by a quote anywhere in the content, so that both read the same
// declarations the same way.
func declParam(param, s string) string {
	key := param + "="
	for i := 0; ; {
		k := strings.Index(s[i:], key)
		if k < 0 || i+k+len(key) >= len(s) {
			return ""
		}
		i += k + len(key)
		if q := s[i]; q == '"' || q == '\'' {
			v, _, ok := strings.Cut(s[i+1:], string(q))
			if !ok {
				return ""
			}
			return v
		}
		i++
	}
}

// scanBang reads a comment or a CDATA section, its "<!" read; every other
// declaration (DOCTYPE, ENTITY...) is refused.
func (s *scanner) scanBang() error {
	if err := s.must(); err != nil {
		return err
	}
	switch s.buf[s.pos] {
	case '-':
		s.pos++
		if err := s.must(); err != nil {
			return err
		}
		if s.buf[s.pos] != '-' {
			return s.errorf("invalid sequence <!- not part of <!--")
		}
		s.pos++
		ds := s.pos - s.mark
		end, err := s.find("--")
		if err != nil {
			return err
		}
		s.pos = end + 2
		if err := s.must(); err != nil {
			return err
		}
		if s.buf[s.pos] != '>' {
			return s.errorf(`invalid sequence "--" not allowed in comments`)
		}
		s.pos++
		s.tok.kind = tokComment
		s.tok.data = s.buf[s.mark+ds : s.pos-3]
		return nil
	case '[':
		s.pos++
		for i := 0; i < len("CDATA["); i++ {
			if err := s.must(); err != nil {
				return err
			}
			if s.buf[s.pos] != "CDATA["[i] {
				return s.errorf("invalid <![ sequence")
			}
			s.pos++
		}
		return s.scanCDATA()
	}
	for s.end-s.pos < 40 && s.more() {
	}
	decl := s.buf[s.pos:min(s.end, s.pos+40)]
	if i := bytes.IndexByte(decl, '>'); i >= 0 {
		decl = decl[:i]
	}
	return s.errorf("declaration <!%s> refused: DOCTYPE and entity declarations are not allowed", decl)
}

// find returns the index in buf of the first sep at or after pos, reading
// input as needed; the input may not end before it.
func (s *scanner) find(sep string) (int, error) {
	from := s.pos
	for {
		if i := bytes.Index(s.buf[from:s.end], []byte(sep)); i >= 0 {
			return from + i, nil
		}
		// The separator may start in the last len(sep)-1 bytes.
		keep := max(s.end-len(sep)+1, from) - s.mark
		s.pos = s.end
		if !s.more() {
			return 0, s.must()
		}
		from = s.mark + keep
	}
}
