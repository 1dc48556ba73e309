package resourcesync

import (
	"bytes"
	"encoding/xml"
)

// xmlNS is the namespace the "xml" prefix is bound to by definition.
const xmlNS = "http://www.w3.org/XML/1998/namespace"

// binding is one namespace declaration in scope: prefix ("" for the
// default namespace) bound to uri by the element at depth.
type binding struct {
	prefix, uri string
	depth       int
}

// nsScope resolves prefixes the way encoding/xml's Token would, but only
// when asked: most elements of a list declare nothing, and most names are
// compared with the few namespaces the reader knows without a string being
// made of them.
type nsScope struct {
	b    []binding
	size int // bytes of the prefixes and namespaces in b, for MaxEntryBytes
	// variant is the last misspelt Sitemap or ResourceSync namespace
	// declared (see canonicalNS), for the reader's warning.
	variant string
}

// push records the declarations among attrs, made by the element at depth.
func (s *nsScope) push(attrs []attr, depth int) {
	for _, a := range attrs {
		prefix, local := splitName(a.name)
		switch {
		case string(prefix) == "xmlns":
			s.b = append(s.b, binding{string(local), s.canonical(a.value), depth})
			s.size += len(local) + len(a.value)
		case len(prefix) == 0 && string(local) == "xmlns":
			s.b = append(s.b, binding{"", s.canonical(a.value), depth})
			s.size += len(a.value)
		}
	}
}

// canonical is the namespace a declaration means: the Sitemap or
// ResourceSync namespace as the specs spell it when a producer wrote it
// with https, without its trailing slash or with one too many, else the
// namespace as written.
func (s *nsScope) canonical(v []byte) string {
	switch string(v) {
	case SitemapNS, RSNS:
		return string(v)
	case "https://www.sitemaps.org/schemas/sitemap/0.9", "http://www.sitemaps.org/schemas/sitemap/0.9/",
		"https://www.sitemaps.org/schemas/sitemap/0.9/":
		s.variant = string(v)
		return SitemapNS
	case "https://www.openarchives.org/rs/terms/", "http://www.openarchives.org/rs/terms",
		"https://www.openarchives.org/rs/terms":
		s.variant = string(v)
		return RSNS
	}
	return string(v)
}

// pop forgets the declarations of elements at depth and deeper.
func (s *nsScope) pop(depth int) {
	for len(s.b) > 0 && s.b[len(s.b)-1].depth >= depth {
		last := s.b[len(s.b)-1]
		s.size -= len(last.prefix) + len(last.uri)
		s.b = s.b[:len(s.b)-1]
	}
}

// lookup returns the namespace bound to prefix. The default namespace may
// be unbound, which means no namespace.
func (s *nsScope) lookup(prefix []byte) (string, bool) {
	if string(prefix) == "xml" {
		return xmlNS, true
	}
	for i := len(s.b) - 1; i >= 0; i-- {
		if s.b[i].prefix == string(prefix) {
			return s.b[i].uri, true
		}
	}
	return "", len(prefix) == 0
}

// splitName splits a name as written into prefix and local part, as
// encoding/xml does: only at a colon with something on both sides.
func splitName(n []byte) (prefix, local []byte) {
	i := bytes.IndexByte(n, ':')
	if i <= 0 || i == len(n)-1 {
		return nil, n
	}
	return n[:i], n[i+1:]
}

// rawName is a name as written, as an xml.Name with the prefix in Space.
func rawName(n []byte) xml.Name {
	prefix, local := splitName(n)
	return xml.Name{Space: string(prefix), Local: string(local)}
}

// isDeclRaw reports whether a is a namespace declaration rather than data.
func isDeclRaw(a attr) bool {
	prefix, local := splitName(a.name)
	return string(prefix) == "xmlns" || len(prefix) == 0 && string(local) == "xmlns"
}

// isDecl is isDeclRaw for an attribute with its prefix in Name.Space.
func isDecl(a xml.Attr) bool {
	return a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns")
}

// strCache makes one string of each short value that entries repeat
// (types, rels, changes), instead of one per entry.
type strCache map[string]string

func (c strCache) get(b []byte) string {
	if len(b) > 64 {
		return string(b)
	}
	if s, ok := c[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c) < 256 {
		c[s] = s
	}
	return s
}
