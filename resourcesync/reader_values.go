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
func (r *Reader) entryChild(e *Entry, t *token, uri string, local []byte) error {
	switch {
	case uri == SitemapNS && string(local) == "loc":
		b, err := r.readBytes("loc", r.lim.MaxURILen, "MaxURILen")
		if err != nil {
			return err
		}
		e.Loc = string(b)
	case uri == SitemapNS && string(local) == "lastmod":
		b, err := r.readBytes("lastmod", r.lim.MaxAttrLen, "MaxAttrLen")
		if err != nil {
			return err
		}
		if e.LastMod, err = r.time("lastmod", b); err != nil {
			return valueError{err: fmt.Errorf("lastmod: %w", err)}
		}
	case uri == SitemapNS && string(local) == "changefreq":
		b, err := r.readBytes("changefreq", r.lim.MaxAttrLen, "MaxAttrLen")
		if err != nil {
			return err
		}
		e.ChangeFreq = r.strs.get(b)
	case uri == RSNS && string(local) == "md":
		if e.MD != nil {
			if err := r.skip(); err != nil {
				return err
			}
			return valueError{err: fmt.Errorf("second <rs:md>")}
		}
		e.MD = &r.blk.md
		err := r.parseMD(t.attrs, e.MD, r.blk)
		if serr := r.skip(); serr != nil {
			return serr
		}
		return err
	case uri == RSNS && string(local) == "ln":
		var l Link
		err := r.parseLink(t.attrs, &l)
		if serr := r.skip(); serr != nil {
			return serr
		}
		if err != nil {
			return err
		}
		e.Links = append(e.Links, l)
	default:
		el, err := r.capture(t, uri)
		if err != nil {
			return err
		}
		e.Extra = append(e.Extra, el)
	}
	return nil
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
		t, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tokText:
			if bad == nil && len(r.text)+len(t.data) > max {
				bad = r.limitErr(limit, "<%s>: more than %d bytes", name, max)
			}
			if bad == nil {
				r.text = append(r.text, t.data...)
			}
		case tokStart:
			if bad == nil {
				_, local := splitName(t.name)
				bad = valueError{err: fmt.Errorf("<%s> inside <%s>", local, name)}
			}
		case tokEnd:
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
func (r *Reader) parseMD(attrs []attr, md *MD, blk *entryBlock) error {
	var bad error
	for _, a := range attrs {
		if err := r.checkAttr(a); err != nil {
			bad = first(bad, err)
			continue
		}
		prefix, local := splitName(a.name)
		if len(prefix) > 0 || string(local) == "xmlns" {
			bad = first(bad, r.extraAttr(a, &md.Extra))
			continue
		}
		v := a.value
		var err error
		switch string(local) {
		case "capability":
			md.Capability = r.strs.get(v)
		case "at":
			md.At, err = r.attrTime(local, v)
		case "completed":
			md.Completed, err = r.attrTime(local, v)
		case "from":
			md.From, err = r.attrTime(local, v)
		case "until":
			md.Until, err = r.attrTime(local, v)
		case "datetime":
			md.DateTime, err = r.attrTime(local, v)
		case "change":
			md.Change = r.strs.get(v)
		case "encoding":
			md.Encoding = r.strs.get(v)
		case "hash":
			var room Hashes
			if blk != nil {
				room = blk.hash[:0:1]
			}
			md.Hash, err = r.hashes(room, v)
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
			md.Path = string(v)
		case "type":
			md.Type = r.strs.get(v)
		default:
			md.Extra = append(md.Extra, xml.Attr{Name: xml.Name{Local: string(local)}, Value: string(v)})
		}
		if err != nil {
			bad = first(bad, valueError{err: fmt.Errorf("rs:md %w", err)})
		}
	}
	return bad
}

// parseLink reads the attributes of an rs:ln element into l.
func (r *Reader) parseLink(attrs []attr, l *Link) error {
	var bad error
	for _, a := range attrs {
		if err := r.checkAttr(a); err != nil {
			bad = first(bad, err)
			continue
		}
		prefix, local := splitName(a.name)
		if len(prefix) > 0 || string(local) == "xmlns" {
			bad = first(bad, r.extraAttr(a, &l.Extra))
			continue
		}
		v := a.value
		var err error
		switch string(local) {
		case "rel":
			l.Rel = r.strs.get(v)
		case "href":
			if len(v) > r.lim.MaxURILen {
				err = r.limitErr("MaxURILen", "rs:ln href: %d bytes, more than %d", len(v), r.lim.MaxURILen)
				bad = first(bad, err)
				continue
			}
			l.Href = string(v)
		case "modified":
			l.Modified, err = r.attrTime(local, v)
		case "hash":
			l.Hash, err = r.hashes(nil, v)
		case "length":
			var n int64
			if n, err = attrLength(v); err == nil {
				l.Length = &n
			}
		case "type":
			l.Type = r.strs.get(v)
		case "encoding":
			l.Encoding = r.strs.get(v)
		case "path":
			l.Path = string(v)
		case "pri":
			l.Pri, err = attrPri(v)
		default:
			l.Extra = append(l.Extra, xml.Attr{Name: xml.Name{Local: string(local)}, Value: string(v)})
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
func (r *Reader) checkAttr(a attr) error {
	if len(a.value) > r.lim.MaxAttrLen {
		return r.limitErr("MaxAttrLen", "attribute %s: %d bytes, more than %d", a.name, len(a.value), r.lim.MaxAttrLen)
	}
	return nil
}

// extraAttr keeps a namespaced attribute with its namespace resolved;
// namespace declarations are syntax, not data, and are dropped.
func (r *Reader) extraAttr(a attr, extra *[]xml.Attr) error {
	if isDeclRaw(a) {
		return nil
	}
	n, err := r.attrName(a.name)
	if err != nil {
		return err // an undeclared prefix is a broken document
	}
	*extra = append(*extra, xml.Attr{Name: n, Value: string(a.value)})
	return nil
}

func (r *Reader) attrTime(name, v []byte) (time.Time, error) {
	if t, ok := parseW3C(v); ok {
		return t, nil
	}
	t, err := r.time(string(name), v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// attrLength reads a length as strconv.ParseInt would, without making a
// string of the common case, plain digits.
func attrLength(v []byte) (int64, error) {
	if len(v) > 0 && len(v) <= 18 {
		var n int64
		i := 0
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			n = n*10 + int64(v[i]-'0')
		}
		if i == len(v) {
			return n, nil
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("length %q: not a non-negative integer", v)
	}
	return n, nil
}

func attrPri(v []byte) (int, error) {
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 || n > 999_999 {
		return 0, fmt.Errorf("pri %q: not an integer from 1 to 999999", v)
	}
	return n, nil
}
