package resourcesync

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"time"
)

// entryChild reads one child element of an entry, always to its end.
// Errors in values come back as valueError or a non-fatal *Error.
func (r *Reader) entryChild(e *Entry, t *xml.StartElement, uri string) error {
	switch {
	case uri == SitemapNS && t.Name.Local == "loc":
		s, err := r.readText("loc", r.lim.MaxURILen, "MaxURILen")
		if err != nil {
			return err
		}
		e.Loc = s
	case uri == SitemapNS && t.Name.Local == "lastmod":
		b, err := r.readBytes("lastmod", r.lim.MaxAttrLen, "MaxAttrLen")
		if err != nil {
			return err
		}
		var ok bool
		if e.LastMod, ok = parseW3C(b); !ok {
			_, err := ParseTime(string(b))
			return valueError{err: fmt.Errorf("lastmod: %w", err)}
		}
	case uri == SitemapNS && t.Name.Local == "changefreq":
		b, err := r.readBytes("changefreq", r.lim.MaxAttrLen, "MaxAttrLen")
		if err != nil {
			return err
		}
		e.ChangeFreq = changeFreq(b)
	case uri == RSNS && t.Name.Local == "md":
		if e.MD != nil {
			if err := r.skip(); err != nil {
				return err
			}
			return valueError{err: fmt.Errorf("second <rs:md>")}
		}
		e.MD = &r.blk.md
		err := r.parseMD(t.Attr, e.MD, r.blk)
		if serr := r.skip(); serr != nil {
			return serr
		}
		return err
	case uri == RSNS && t.Name.Local == "ln":
		var l Link
		err := r.parseLink(t.Attr, &l)
		if serr := r.skip(); serr != nil {
			return serr
		}
		if err != nil {
			return err
		}
		e.Links = append(e.Links, l)
	default:
		el, err := r.capture(*t, uri)
		if err != nil {
			return err
		}
		e.Extra = append(e.Extra, el)
	}
	return nil
}

// changeFreq returns the value of a changefreq element, without allocating
// for the values the Sitemap protocol defines.
func changeFreq(b []byte) string {
	for _, v := range [...]string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"} {
		if string(b) == v {
			return v
		}
	}
	return string(b)
}

// readText is readBytes as a string.
func (r *Reader) readText(name string, max int, limit string) (string, error) {
	b, err := r.readBytes(name, max, limit)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// readBytes reads the text content of the element just started, trimmed of
// surrounding white space. An element inside it, or text over max bytes,
// is a value error once the element has been read to its end.
// The bytes are valid until the next read.
func (r *Reader) readBytes(name string, max int, limit string) ([]byte, error) {
	r.text = r.text[:0]
	depth := len(r.stack)
	var bad error
	for {
		tok, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if bad == nil && len(r.text)+len(t) > max {
				bad = r.limitErr(limit, "<%s>: more than %d bytes", name, max)
			}
			if bad == nil {
				r.text = append(r.text, t...)
			}
		case xml.StartElement:
			if bad == nil {
				bad = valueError{err: fmt.Errorf("<%s> inside <%s>", t.Name.Local, name)}
			}
		case xml.EndElement:
			r.endElement()
			if len(r.stack) < depth {
				if bad != nil {
					return nil, bad
				}
				return bytes.TrimSpace(r.text), nil
			}
		}
	}
}

// parseMD reads the attributes of an rs:md element into md. It reads all
// of them even after a bad one and returns the first problem.
// blk, when not nil, has room for the length and a hash.
func (r *Reader) parseMD(attrs []xml.Attr, md *MD, blk *entryBlock) error {
	var bad error
	for _, a := range attrs {
		if err := r.checkAttr(a); err != nil {
			bad = first(bad, err)
			continue
		}
		if a.Name.Space != "" || a.Name.Local == "xmlns" {
			bad = first(bad, r.extraAttr(a, &md.Extra))
			continue
		}
		v := a.Value
		var err error
		switch a.Name.Local {
		case "capability":
			md.Capability = v
		case "at":
			md.At, err = attrTime(a)
		case "completed":
			md.Completed, err = attrTime(a)
		case "from":
			md.From, err = attrTime(a)
		case "until":
			md.Until, err = attrTime(a)
		case "datetime":
			md.DateTime, err = attrTime(a)
		case "change":
			md.Change = v
		case "encoding":
			md.Encoding = v
		case "hash":
			var room Hashes
			if blk != nil {
				room = blk.hash[:0:1]
			}
			md.Hash, err = parseHashesInto(room, v)
		case "length":
			var n int64
			if n, err = attrLength(v); err == nil {
				if blk != nil {
					blk.length = n
					md.Length = &blk.length
				} else {
					md.Length = &n
				}
			}
		case "path":
			md.Path = v
		case "type":
			md.Type = v
		default:
			md.Extra = append(md.Extra, a)
		}
		if err != nil {
			bad = first(bad, valueError{err: fmt.Errorf("rs:md %w", err)})
		}
	}
	return bad
}

// parseLink reads the attributes of an rs:ln element into l.
func (r *Reader) parseLink(attrs []xml.Attr, l *Link) error {
	var bad error
	for _, a := range attrs {
		if err := r.checkAttr(a); err != nil {
			bad = first(bad, err)
			continue
		}
		if a.Name.Space != "" || a.Name.Local == "xmlns" {
			bad = first(bad, r.extraAttr(a, &l.Extra))
			continue
		}
		v := a.Value
		var err error
		switch a.Name.Local {
		case "rel":
			l.Rel = v
		case "href":
			if len(v) > r.lim.MaxURILen {
				err = r.limitErr("MaxURILen", "rs:ln href: %d bytes, more than %d", len(v), r.lim.MaxURILen)
				bad = first(bad, err)
				continue
			}
			l.Href = v
		case "modified":
			l.Modified, err = attrTime(a)
		case "hash":
			l.Hash, err = ParseHashesLoose(v)
		case "length":
			var n int64
			if n, err = attrLength(v); err == nil {
				l.Length = &n
			}
		case "type":
			l.Type = v
		case "encoding":
			l.Encoding = v
		case "path":
			l.Path = v
		case "pri":
			l.Pri, err = attrPri(v)
		default:
			l.Extra = append(l.Extra, a)
		}
		if err != nil {
			bad = first(bad, valueError{err: fmt.Errorf("rs:ln %w", err)})
		}
	}
	return bad
}

func first(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// checkAttr applies MaxAttrLen to an attribute value.
func (r *Reader) checkAttr(a xml.Attr) error {
	if len(a.Value) > r.lim.MaxAttrLen {
		return r.limitErr("MaxAttrLen", "attribute %s: %d bytes, more than %d", qname(a.Name), len(a.Value), r.lim.MaxAttrLen)
	}
	return nil
}

// extraAttr keeps a namespaced attribute with its namespace resolved;
// namespace declarations are syntax, not data, and are dropped.
func (r *Reader) extraAttr(a xml.Attr, extra *[]xml.Attr) error {
	if isDecl(a) {
		return nil
	}
	n, err := r.attrName(a.Name)
	if err != nil {
		return err // an undeclared prefix is a broken document
	}
	*extra = append(*extra, xml.Attr{Name: n, Value: a.Value})
	return nil
}

func attrTime(a xml.Attr) (time.Time, error) {
	t, err := ParseTime(a.Value)
	if err != nil {
		return t, fmt.Errorf("%s: %w", a.Name.Local, err)
	}
	return t, nil
}

func attrLength(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("length %q: not a non-negative integer", v)
	}
	return n, nil
}

func attrPri(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 999_999 {
		return 0, fmt.Errorf("pri %q: not an integer from 1 to 999999", v)
	}
	return n, nil
}
