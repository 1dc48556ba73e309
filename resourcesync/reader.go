package resourcesync

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"time"
)

// Reader reads one ResourceSync document, one entry at a time, so that
// memory does not grow with the number of entries. It reads tokens from
// its own scanner, which allocates nothing per token, and resolves
// namespaces itself, only for the names it needs to know.
type Reader struct {
	lim     Limits
	src     tokenSource
	ns      nsScope
	names   []byte // raw names of the open elements, root first, end to end
	stack   []int  // where each open element's name starts in names
	header  Header
	entry   string // local name of entries: "url" or "sitemap"
	pending bool   // the first entry's start tag has been read by NewReader
	entries int
	done    bool
	err     error // sticky fatal error
	text    []byte
	blk     *entryBlock // of the entry being read
	strs    strCache
	kept    int // bytes of start tags and captured text since the entry (or the header) began, for MaxEntryBytes

	// what the tolerant reading needs (tolerate.go)
	base       *url.URL // the document's URL, nil when unknown
	kind       Kind
	caps       uint16    // capabilities met in a Capability List, by capBit
	prevChange time.Time // of the last timed change entry
	warns      []Warning
}

// NewReader reads a document through its header: the root element and the
// rs:md, rs:ln and extension elements before the first entry. Content
// starting with the gzip magic bytes is gunzipped, within MaxDecompressed.
// Input that is not a Sitemap fails with an Error wrapping ErrNotSitemap.
func NewReader(r io.Reader, lim Limits) (*Reader, error) {
	return NewReaderAt(r, "", lim)
}

// NewReaderAt is NewReader for a document read from the URL base: its
// relative locs and hrefs are resolved against base (with a warning), as
// a browser resolves a page's links. An empty or unparsable base leaves
// them as written.
func NewReaderAt(r io.Reader, base string, lim Limits) (*Reader, error) {
	lim = lim.withDefaults()
	in, err := openInput(r, lim)
	if err != nil {
		rd := &Reader{lim: lim}
		return nil, rd.fatal(err)
	}
	return newReader(newScanner(in, lim.MaxTokenLen), lim, parseBase(base))
}

// newReader reads the header from src, lim already complete.
func newReader(src tokenSource, lim Limits, base *url.URL) (*Reader, error) {
	rd := &Reader{lim: lim, src: src, strs: strCache{}, base: base}
	if err := rd.readRoot(); err != nil {
		return nil, err
	}
	if err := rd.readHeader(); err != nil {
		return nil, err
	}
	rd.tolerateHeader()
	return rd, nil
}

// parseBase is the document URL relative URIs resolve against: only an
// absolute one will do.
func parseBase(base string) *url.URL {
	u, err := url.Parse(base)
	if base == "" || err != nil || !u.IsAbs() {
		return nil
	}
	return u
}

// Header is the document's header, read by NewReader.
func (r *Reader) Header() *Header { return &r.header }

// Line is the current line in the (decompressed) document.
func (r *Reader) Line() int {
	if r.src == nil {
		return 0
	}
	return r.src.line()
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
// scope and the depth limit. The token is valid until the next call.
func (r *Reader) token() (*token, error) {
	t, err := r.src.next()
	if err != nil {
		if err == io.EOF && len(r.stack) > 0 {
			return nil, fmt.Errorf("document ends inside <%s>", r.names[r.stack[len(r.stack)-1]:])
		}
		return nil, err
	}
	switch t.kind {
	case tokStart:
		if len(r.stack) >= r.lim.MaxDepth {
			e := r.limitErr("MaxDepth", "element <%s> nested more than %d deep", t.name, r.lim.MaxDepth)
			e.Fatal = true
			return nil, e
		}
		r.stack = append(r.stack, len(r.names))
		r.names = append(r.names, t.name...)
		r.kept += len(t.name)
		for _, a := range t.attrs {
			r.kept += len(a.name) + len(a.value)
		}
		if hasDecl(t.attrs) {
			if err := checkDecls(t.attrs); err != nil {
				return nil, err
			}
			r.ns.push(t.attrs, len(r.stack))
		}
		if len(r.names)+r.ns.size > r.lim.MaxEntryBytes {
			e := r.limitErr("MaxEntryBytes", "names of open elements and namespace declarations in scope: more than %d bytes", r.lim.MaxEntryBytes)
			e.Fatal = true
			return nil, e
		}
	case tokEnd:
		if len(r.stack) == 0 {
			return nil, fmt.Errorf("unexpected </%s>", t.name)
		}
		at := r.stack[len(r.stack)-1]
		if open := r.names[at:]; !bytes.Equal(open, t.name) {
			return nil, fmt.Errorf("element <%s> closed by </%s>", open, t.name)
		}
		r.names = r.names[:at]
		r.stack = r.stack[:len(r.stack)-1]
	}
	return t, nil
}

// endElement is called after an end tag has been handled, to drop the
// namespaces its element declared.
func (r *Reader) endElement() {
	if len(r.ns.b) > 0 {
		r.ns.pop(len(r.stack) + 1)
	}
}

func hasDecl(attrs []attr) bool {
	for _, a := range attrs {
		if isDeclRaw(a) {
			return true
		}
	}
	return false
}

// checkDecls refuses what Namespaces in XML 1.0 forbids: binding a prefix
// to no namespace, or rebinding xml and xmlns.
func checkDecls(attrs []attr) error {
	for _, a := range attrs {
		prefix, local := splitName(a.name)
		if string(prefix) != "xmlns" {
			continue
		}
		switch {
		case len(a.value) == 0:
			return fmt.Errorf("namespace prefix %q bound to no namespace", local)
		case string(local) == "xmlns" || string(local) == "xml" && string(a.value) != xmlNS:
			return fmt.Errorf("namespace prefix %q may not be declared", local)
		case !nameStart(local):
			return fmt.Errorf("namespace prefix %q is not a name", local)
		}
	}
	return nil
}

// nameStart reports whether s starts as an XML name must (a letter, an
// underscore or any non-ASCII character), which a name split at its
// colon does not promise for the part after it.
func nameStart(s []byte) bool {
	if len(s) == 0 {
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

// resolve returns the namespace and local part of a name as written.
func (r *Reader) resolve(n []byte) (string, []byte, error) {
	prefix, local := splitName(n)
	uri, ok := r.ns.lookup(prefix)
	if !ok {
		return "", local, fmt.Errorf("element <%s>: undeclared namespace prefix %q", n, prefix)
	}
	return uri, local, nil
}

// readRoot reads the prolog and the root element.
func (r *Reader) readRoot() error {
	for {
		t, err := r.token()
		if err == io.EOF {
			return r.fatal(fmt.Errorf("%w: no root element", ErrNotSitemap))
		}
		if err != nil {
			return r.fatal(err)
		}
		if t.kind != tokStart {
			continue
		}
		uri, local, err := r.resolve(t.name)
		if err != nil {
			return r.fatal(err)
		}
		switch {
		case uri == SitemapNS && string(local) == "urlset":
			r.header.Root, r.entry = URLSet, "url"
		case uri == SitemapNS && string(local) == "sitemapindex":
			r.header.Root, r.entry = SitemapIndex, "sitemap"
		case string(local) == "urlset" || string(local) == "sitemapindex":
			return r.fatal(fmt.Errorf("%w: root <%s> in namespace %q, want %q", ErrNotSitemap, local, uri, SitemapNS))
		default:
			return r.fatal(fmt.Errorf("%w: root element is <%s>, want <urlset> or <sitemapindex>", ErrNotSitemap, t.name))
		}
		attrs, err := r.rootAttrs(t.attrs)
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
func (r *Reader) rootAttrs(attrs []attr) ([]xml.Attr, error) {
	var out []xml.Attr
	for _, a := range attrs {
		if len(a.value) > r.lim.MaxAttrLen {
			return nil, r.limitErr("MaxAttrLen", "root attribute %s: %d bytes, more than %d", a.name, len(a.value), r.lim.MaxAttrLen)
		}
		if isDeclRaw(a) {
			prefix, local := splitName(a.name)
			v := string(a.value)
			if v == SitemapNS || v == RSNS || len(prefix) == 0 || string(local) == "rs" {
				continue
			}
			out = append(out, xml.Attr{Name: rawName(a.name), Value: v})
			continue
		}
		n, err := r.attrName(a.name)
		if err != nil {
			return nil, err
		}
		out = append(out, xml.Attr{Name: n, Value: string(a.value)})
	}
	return out, nil
}

// attrName resolves a prefixed attribute name to its namespace; an
// unprefixed attribute has none.
func (r *Reader) attrName(name []byte) (xml.Name, error) {
	prefix, local := splitName(name)
	if len(prefix) == 0 {
		return xml.Name{Local: r.strs.get(local)}, nil
	}
	uri, ok := r.ns.lookup(prefix)
	if !ok {
		return rawName(name), fmt.Errorf("attribute %s: undeclared namespace prefix %q", name, prefix)
	}
	return xml.Name{Space: uri, Local: r.strs.get(local)}, nil
}
