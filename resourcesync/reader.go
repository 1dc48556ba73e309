package resourcesync

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// Reader reads one ResourceSync document, one entry at a time, so that
// memory does not grow with the number of entries. It works on
// encoding/xml's RawToken, resolving namespaces itself, since Token's
// translation and checks cost more than everything else together.
type Reader struct {
	lim     Limits
	d       *xml.Decoder
	ns      nsScope
	stack   []xml.Name // raw names of the open elements, root first
	header  Header
	entry   string // local name of entries: "url" or "sitemap"
	pending *xml.StartElement
	entries int
	done    bool
	err     error // sticky fatal error
	text    []byte
	blk     *entryBlock // of the entry being read
}

// NewReader reads a document through its header: the root element and the
// rs:md, rs:ln and extension elements before the first entry. Content
// starting with the gzip magic bytes is gunzipped, within MaxDecompressed.
// Input that is not a Sitemap fails with an Error wrapping ErrNotSitemap.
func NewReader(r io.Reader, lim Limits) (*Reader, error) {
	lim = lim.withDefaults()
	in, err := openInput(r, lim)
	rd := &Reader{lim: lim}
	if err != nil {
		return nil, rd.fatal(err)
	}
	rd.d = xml.NewDecoder(in)
	rd.d.CharsetReader = charsetReader
	if err := rd.readRoot(); err != nil {
		return nil, err
	}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	return rd, nil
}

// Header is the document's header, read by NewReader.
func (r *Reader) Header() *Header { return &r.header }

// Line is the current line in the (decompressed) document.
func (r *Reader) Line() int {
	if r.d == nil {
		return 0
	}
	line, _ := r.d.InputPos()
	return line
}

// fatal records err as the reader's final error, as an *Error with the
// current line and, for a size cap, the limit's name.
func (r *Reader) fatal(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Line: r.Line(), Err: err}
		var le *limitError
		if errors.As(err, &le) {
			e.Limit = le.limit
		}
	}
	e.Fatal = true
	r.err = e
	return e
}

// limitErr is the Error for a value over one of the limits.
func (r *Reader) limitErr(limit string, format string, args ...any) *Error {
	return &Error{Line: r.Line(), Limit: limit, Err: fmt.Errorf(format, args...)}
}

// token returns the next token, keeping the element stack, the namespace
// scope and the depth limit. Its StartElement is valid until the next call,
// as with RawToken.
func (r *Reader) token() (xml.Token, error) {
	tok, err := r.d.RawToken()
	if err != nil {
		if err == io.EOF {
			if len(r.stack) > 0 {
				return nil, fmt.Errorf("document ends inside <%s>", r.stack[len(r.stack)-1].Local)
			}
			return nil, io.EOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case xml.StartElement:
		if len(r.stack) >= r.lim.MaxDepth {
			e := r.limitErr("MaxDepth", "element <%s> nested more than %d deep", t.Name.Local, r.lim.MaxDepth)
			e.Fatal = true
			return nil, e
		}
		r.stack = append(r.stack, t.Name)
		if hasDecl(t.Attr) {
			if err := checkDecls(t.Attr); err != nil {
				return nil, err
			}
			r.ns.push(t.Attr, len(r.stack))
		}
	case xml.EndElement:
		if len(r.stack) == 0 {
			return nil, fmt.Errorf("unexpected </%s>", t.Name.Local)
		}
		if open := r.stack[len(r.stack)-1]; open != t.Name {
			return nil, fmt.Errorf("element <%s> closed by </%s>", qname(open), qname(t.Name))
		}
		r.stack = r.stack[:len(r.stack)-1]
	case xml.Directive:
		return nil, fmt.Errorf("declaration <!%.40s> refused: DOCTYPE and entity declarations are not allowed", t)
	}
	return tok, nil
}

// endElement is called after an EndElement token has been handled, to drop
// the namespaces its element declared.
func (r *Reader) endElement() {
	if len(r.ns.b) > 0 {
		r.ns.pop(len(r.stack) + 1)
	}
}

func hasDecl(attrs []xml.Attr) bool {
	for _, a := range attrs {
		if isDecl(a) {
			return true
		}
	}
	return false
}

// checkDecls refuses what Namespaces in XML 1.0 forbids: binding a prefix
// to no namespace, or rebinding xml and xmlns.
func checkDecls(attrs []xml.Attr) error {
	for _, a := range attrs {
		if a.Name.Space != "xmlns" {
			continue
		}
		switch {
		case a.Value == "":
			return fmt.Errorf("namespace prefix %q bound to no namespace", a.Name.Local)
		case a.Name.Local == "xmlns" || a.Name.Local == "xml" && a.Value != xmlNS:
			return fmt.Errorf("namespace prefix %q may not be declared", a.Name.Local)
		case !nameStart(a.Name.Local):
			return fmt.Errorf("namespace prefix %q is not a name", a.Name.Local)
		}
	}
	return nil
}

// nameStart reports whether s starts as an XML name must (a letter, an
// underscore or any non-ASCII character), which encoding/xml does not
// check after a colon.
func nameStart(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// resolve returns the namespace of a raw element name.
func (r *Reader) resolve(n xml.Name) (string, error) {
	uri, ok := r.ns.lookup(n.Space)
	if !ok {
		return "", fmt.Errorf("element <%s>: undeclared namespace prefix %q", qname(n), n.Space)
	}
	return uri, nil
}

// readRoot reads the prolog and the root element.
func (r *Reader) readRoot() error {
	for {
		tok, err := r.token()
		if err == io.EOF {
			return r.fatal(fmt.Errorf("%w: no root element", ErrNotSitemap))
		}
		if err != nil {
			return r.fatal(err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		uri, err := r.resolve(start.Name)
		if err != nil {
			return r.fatal(err)
		}
		switch {
		case uri == SitemapNS && start.Name.Local == "urlset":
			r.header.Root, r.entry = URLSet, "url"
		case uri == SitemapNS && start.Name.Local == "sitemapindex":
			r.header.Root, r.entry = SitemapIndex, "sitemap"
		case start.Name.Local == "urlset" || start.Name.Local == "sitemapindex":
			return r.fatal(fmt.Errorf("%w: root <%s> in namespace %q, want %q", ErrNotSitemap, start.Name.Local, uri, SitemapNS))
		default:
			return r.fatal(fmt.Errorf("%w: root element is <%s>, want <urlset> or <sitemapindex>", ErrNotSitemap, qname(start.Name)))
		}
		attrs, err := r.rootAttrs(start.Attr)
		if err != nil {
			return r.fatal(err)
		}
		r.header.RootAttrs = attrs
		return nil
	}
}

// rootAttrs keeps the root's attributes except the declarations of the
// Sitemap and ResourceSync namespaces and of the prefixes "" and "rs",
// which the writer always makes itself.
func (r *Reader) rootAttrs(attrs []xml.Attr) ([]xml.Attr, error) {
	var out []xml.Attr
	for _, a := range attrs {
		if len(a.Value) > r.lim.MaxAttrLen {
			return nil, r.limitErr("MaxAttrLen", "root attribute %s: %d bytes, more than %d", qname(a.Name), len(a.Value), r.lim.MaxAttrLen)
		}
		if isDecl(a) {
			if a.Value == SitemapNS || a.Value == RSNS || a.Name.Space == "" || a.Name.Local == "rs" {
				continue
			}
			out = append(out, a)
			continue
		}
		n, err := r.attrName(a.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, xml.Attr{Name: n, Value: a.Value})
	}
	return out, nil
}

// attrName resolves a prefixed attribute name to its namespace; an
// unprefixed attribute has none.
func (r *Reader) attrName(n xml.Name) (xml.Name, error) {
	if n.Space == "" {
		return n, nil
	}
	uri, ok := r.ns.lookup(n.Space)
	if !ok {
		return n, fmt.Errorf("attribute %s: undeclared namespace prefix %q", qname(n), n.Space)
	}
	return xml.Name{Space: uri, Local: n.Local}, nil
}
