package resourcesync

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
)

// capture reads an element this package does not interpret, just started
// (start, in namespace uri), and keeps it as raw XML. The namespaces it
// uses from outside are declared on its top element, so that the bytes
// mean the same wherever a writer puts them. Its size is bounded by
// MaxAttrLen.
func (r *Reader) capture(start *token, uri string) (Element, error) {
	first := xmlToken(start)
	name := first.(xml.StartElement).Name
	el := Element{Name: xml.Name{Space: uri, Local: name.Local}}
	toks := []xml.Token{first}
	size := 0
	depth := len(r.stack)
	for depth <= len(r.stack) {
		t, err := r.token()
		if err != nil {
			return el, err
		}
		switch t.kind {
		case tokStart:
			for _, a := range t.attrs {
				size += len(a.value)
			}
		case tokText, tokComment, tokPI:
			size += len(t.data)
			r.kept += len(t.data)
		case tokEnd:
			r.endElement()
		}
		if size > r.lim.MaxAttrLen || r.kept > r.lim.MaxEntryBytes {
			if len(r.stack) >= depth {
				if err := r.skipTo(depth); err != nil {
					return el, err
				}
			}
			if size <= r.lim.MaxAttrLen {
				return el, r.limitErr("MaxEntryBytes", "extension element <%s>: more than %d bytes in the entry or header", qname(name), r.lim.MaxEntryBytes)
			}
			return el, r.limitErr("MaxAttrLen", "extension element <%s>: more than %d bytes", qname(name), r.lim.MaxAttrLen)
		}
		toks = append(toks, xmlToken(t))
	}
	need, err := r.outerPrefixes(toks)
	if err != nil {
		return el, err
	}
	el.XML = serialise(toks, need)
	return el, nil
}

// xmlToken copies a token into the form encoding/xml's RawToken gives,
// which is how captured elements are kept until they are serialised.
func xmlToken(t *token) xml.Token {
	switch t.kind {
	case tokStart:
		s := xml.StartElement{Name: rawName(t.name), Attr: make([]xml.Attr, len(t.attrs))}
		for i, a := range t.attrs {
			s.Attr[i] = xml.Attr{Name: rawName(a.name), Value: string(a.value)}
		}
		return s
	case tokEnd:
		return xml.EndElement{Name: rawName(t.name)}
	case tokText:
		return xml.CharData(bytes.Clone(t.data))
	case tokComment:
		return xml.Comment(bytes.Clone(t.data))
	}
	return xml.ProcInst{Target: string(t.name), Inst: bytes.Clone(t.data)}
}

// skipTo reads until the element open at depth has closed.
func (r *Reader) skipTo(depth int) error {
	for len(r.stack) >= depth {
		t, err := r.token()
		if err != nil {
			return err
		}
		if t.kind == tokEnd {
			r.endElement()
		}
	}
	return nil
}

// outerPrefixes lists, in order of first use, the prefixes the subtree uses
// without declaring them, with the namespace each is bound to where the
// subtree starts. toks[0]'s own declarations are still in r.ns when called,
// and are in its attributes anyway.
func (r *Reader) outerPrefixes(toks []xml.Token) ([]binding, error) {
	var need []binding
	var local []binding
	depth := 0
	use := func(prefix string) error {
		if prefix == "xml" || prefix == "xmlns" {
			return nil
		}
		for i := len(local) - 1; i >= 0; i-- {
			if local[i].prefix == prefix {
				return nil
			}
		}
		if slices.ContainsFunc(need, func(b binding) bool { return b.prefix == prefix }) {
			return nil
		}
		uri, ok := r.ns.lookup([]byte(prefix))
		if !ok {
			return fmt.Errorf("extension element: undeclared namespace prefix %q", prefix)
		}
		need = append(need, binding{prefix: prefix, uri: uri})
		return nil
	}
	for _, tok := range toks {
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns":
					local = append(local, binding{a.Name.Local, a.Value, depth})
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					local = append(local, binding{"", a.Value, depth})
				}
			}
			if err := use(t.Name.Space); err != nil {
				return nil, err
			}
			for _, a := range t.Attr {
				if a.Name.Space != "" && !isDecl(a) {
					if err := use(a.Name.Space); err != nil {
						return nil, err
					}
				}
			}
		case xml.EndElement:
			for len(local) > 0 && local[len(local)-1].depth >= depth {
				local = local[:len(local)-1]
			}
			depth--
		}
	}
	return need, nil
}

// serialise writes raw tokens back as XML, adding the declarations in need
// to the first element.
func serialise(toks []xml.Token, need []binding) []byte {
	var b []byte
	for i, tok := range toks {
		switch t := tok.(type) {
		case xml.StartElement:
			b = append(b, '<')
			b = appendRawName(b, t.Name)
			for _, a := range t.Attr {
				b = append(b, ' ')
				b = appendRawName(b, a.Name)
				b = append(b, `="`...)
				b = appendEscaped(b, a.Value, true)
				b = append(b, '"')
			}
			if i == 0 {
				for _, n := range need {
					if n.prefix == "" {
						b = append(b, ` xmlns="`...)
					} else {
						b = append(b, " xmlns:"...)
						b = append(b, n.prefix...)
						b = append(b, `="`...)
					}
					b = appendEscaped(b, n.uri, true)
					b = append(b, '"')
				}
			}
			b = append(b, '>')
		case xml.EndElement:
			b = append(b, "</"...)
			b = appendRawName(b, t.Name)
			b = append(b, '>')
		case xml.CharData:
			b = appendEscaped(b, string(t), false)
		case xml.Comment:
			b = append(b, "<!--"...)
			b = append(b, t...)
			b = append(b, "-->"...)
		case xml.ProcInst:
			b = append(b, "<?"...)
			b = append(b, t.Target...)
			if len(t.Inst) > 0 {
				b = append(b, ' ')
				b = append(b, t.Inst...)
			}
			b = append(b, "?>"...)
		}
	}
	return b
}

func appendRawName(b []byte, n xml.Name) []byte {
	if n.Space != "" {
		b = append(b, n.Space...)
		b = append(b, ':')
	}
	return append(b, n.Local...)
}
