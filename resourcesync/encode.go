package resourcesync

import (
	"encoding/xml"
	"strconv"
	"time"
)

const xmlDecl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

func (c *encoder) appendHeader(b []byte, h *Header) []byte {
	b = append(b, xmlDecl...)
	b = append(b, '<')
	b = append(b, h.Root.String()...)
	b = append(b, ` xmlns="`+SitemapNS+`" xmlns:rs="`+RSNS+`"`...)
	for _, a := range h.RootAttrs {
		if isDecl(a) && (a.Name.Space == "" || a.Name.Local == "rs") {
			continue // the two namespaces above are always the document's
		}
		b = c.appendAttr(b, a, nil)
	}
	for _, a := range c.rootGen {
		b = c.appendAttr(b, a, nil)
	}
	b = append(b, ">\n"...)
	if !mdEmpty(&h.MD) {
		b = c.appendMD(b, &h.MD)
		b = append(b, '\n')
	}
	for i := range h.Links {
		b = c.appendLink(b, &h.Links[i])
		b = append(b, '\n')
	}
	for _, el := range h.Extra {
		b = append(b, el.XML...)
		b = append(b, '\n')
	}
	return b
}

func (c *encoder) appendEntry(b []byte, e *Entry, root Root) []byte {
	b = appendEntryStart(b, root)
	b = appendEscaped(b, e.Loc, false)
	return c.appendEntryRest(b, e, root)
}

// appendEntryStart opens an entry up to the text of its loc.
func appendEntryStart(b []byte, root Root) []byte {
	if root == SitemapIndex {
		return append(b, "<sitemap><loc>"...)
	}
	return append(b, "<url><loc>"...)
}

// appendEntryRest closes the loc and writes the rest of e.
func (c *encoder) appendEntryRest(b []byte, e *Entry, root Root) []byte {
	elem := "url"
	if root == SitemapIndex {
		elem = "sitemap"
	}
	b = append(b, "</loc>"...)
	if !e.LastMod.IsZero() {
		b = append(b, "<lastmod>"...)
		b = appendW3C(b, e.LastMod)
		b = append(b, "</lastmod>"...)
	}
	if e.ChangeFreq != "" {
		b = append(b, "<changefreq>"...)
		b = appendEscaped(b, e.ChangeFreq, false)
		b = append(b, "</changefreq>"...)
	}
	if e.MD != nil {
		b = c.appendMD(b, e.MD)
	}
	for i := range e.Links {
		b = c.appendLink(b, &e.Links[i])
	}
	for _, el := range e.Extra {
		b = append(b, el.XML...)
	}
	b = append(b, "</"...)
	b = append(b, elem...)
	return append(b, ">\n"...)
}

func mdEmpty(m *MD) bool {
	return m.Capability == "" && m.At.IsZero() && m.Completed.IsZero() &&
		m.From.IsZero() && m.Until.IsZero() && m.Change == "" &&
		m.DateTime.IsZero() && m.Encoding == "" && len(m.Hash) == 0 &&
		m.Length == nil && m.Path == "" && m.Type == "" && len(m.Extra) == 0
}

func (c *encoder) appendMD(b []byte, m *MD) []byte {
	b = append(b, "<rs:md"...)
	b = appendStrAttr(b, "capability", m.Capability)
	b = appendTimeAttr(b, "at", m.At)
	b = appendTimeAttr(b, "completed", m.Completed)
	b = appendTimeAttr(b, "from", m.From)
	b = appendTimeAttr(b, "until", m.Until)
	b = appendStrAttr(b, "change", m.Change)
	b = appendTimeAttr(b, "datetime", m.DateTime)
	b = appendHashAttr(b, m.Hash)
	b = appendLengthAttr(b, m.Length)
	b = appendStrAttr(b, "type", m.Type)
	b = appendStrAttr(b, "encoding", m.Encoding)
	b = appendStrAttr(b, "path", m.Path)
	b = c.appendExtra(b, m.Extra)
	return append(b, "/>"...)
}

func (c *encoder) appendLink(b []byte, l *Link) []byte {
	b = append(b, "<rs:ln"...)
	b = appendStrAttr(b, "rel", l.Rel)
	b = appendStrAttr(b, "href", l.Href)
	b = appendTimeAttr(b, "modified", l.Modified)
	b = appendHashAttr(b, l.Hash)
	b = appendLengthAttr(b, l.Length)
	b = appendStrAttr(b, "type", l.Type)
	b = appendStrAttr(b, "encoding", l.Encoding)
	b = appendStrAttr(b, "path", l.Path)
	if l.Pri != 0 {
		b = append(b, ` pri="`...)
		b = strconv.AppendInt(b, int64(l.Pri), 10)
		b = append(b, '"')
	}
	b = c.appendExtra(b, l.Extra)
	return append(b, "/>"...)
}

// appendExtra writes unknown attributes; a namespace the root does not
// declare is declared on the element itself.
func (c *encoder) appendExtra(b []byte, attrs []xml.Attr) []byte {
	var local map[string]string
	for _, a := range attrs {
		if isDecl(a) {
			continue
		}
		b = c.appendAttr(b, a, &local)
	}
	return b
}

func (c *encoder) appendAttr(b []byte, a xml.Attr, local *map[string]string) []byte {
	b = append(b, ' ')
	switch {
	case a.Name.Space == "xmlns":
		b = append(b, "xmlns:"...)
	case a.Name.Space != "":
		p, ok := c.prefixes[a.Name.Space]
		if !ok && local != nil {
			p, ok = (*local)[a.Name.Space]
			if !ok {
				if *local == nil {
					*local = map[string]string{}
				}
				p = "ns" + itoa(100+len(*local))
				for c.taken[p] {
					p += "_"
				}
				(*local)[a.Name.Space] = p
				b = append(b, "xmlns:"...)
				b = append(b, p...)
				b = append(b, `="`...)
				b = appendEscaped(b, a.Name.Space, true)
				b = append(b, `" `...)
			}
		}
		b = append(b, p...)
		b = append(b, ':')
	}
	b = append(b, a.Name.Local...)
	b = append(b, `="`...)
	b = appendEscaped(b, a.Value, true)
	return append(b, '"')
}

func appendStrAttr(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendEscaped(b, v, true)
	return append(b, '"')
}

func appendTimeAttr(b []byte, name string, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendW3C(b, t)
	return append(b, '"')
}

func appendHashAttr(b []byte, hs Hashes) []byte {
	if len(hs) == 0 {
		return b
	}
	b = append(b, ` hash="`...)
	for i, h := range hs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendEscaped(b, h.Alg, true)
		b = append(b, ':')
		b = appendEscaped(b, h.Value, true)
	}
	return append(b, '"')
}

func appendLengthAttr(b []byte, n *int64) []byte {
	if n == nil {
		return b
	}
	b = append(b, ` length="`...)
	b = strconv.AppendInt(b, *n, 10)
	return append(b, '"')
}
