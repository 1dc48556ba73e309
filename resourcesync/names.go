package resourcesync

import "encoding/xml"

// xmlNS is the namespace the "xml" prefix is bound to by definition.
const xmlNS = "http://www.w3.org/XML/1998/namespace"

// binding is one namespace declaration in scope: prefix ("" for the
// default namespace) bound to uri by the element at depth.
type binding struct {
	prefix, uri string
	depth       int
}

// nsScope resolves prefixes the way encoding/xml's Token would, but only
// when asked: the reader uses RawToken, which is much cheaper, and most
// elements of a list declare nothing.
type nsScope struct {
	b []binding
}

// push records the declarations among attrs, made by the element at depth.
func (s *nsScope) push(attrs []xml.Attr, depth int) {
	for _, a := range attrs {
		switch {
		case a.Name.Space == "xmlns":
			s.b = append(s.b, binding{a.Name.Local, a.Value, depth})
		case a.Name.Space == "" && a.Name.Local == "xmlns":
			s.b = append(s.b, binding{"", a.Value, depth})
		}
	}
}

// pop forgets the declarations of elements at depth and deeper.
func (s *nsScope) pop(depth int) {
	for len(s.b) > 0 && s.b[len(s.b)-1].depth >= depth {
		s.b = s.b[:len(s.b)-1]
	}
}

// lookup returns the namespace bound to prefix. The default namespace may
// be unbound, which means no namespace.
func (s *nsScope) lookup(prefix string) (string, bool) {
	if prefix == "xml" {
		return xmlNS, true
	}
	for i := len(s.b) - 1; i >= 0; i-- {
		if s.b[i].prefix == prefix {
			return s.b[i].uri, true
		}
	}
	return "", prefix == ""
}

// isDecl reports whether a is a namespace declaration rather than data.
func isDecl(a xml.Attr) bool {
	return a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns")
}
