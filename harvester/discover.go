package harvester

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/url"
	"strings"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// ErrNotDiscovered is wrapped by Discover's error when no Source
// Description or Capability List could be found from the URI given.
var ErrNotDiscovered = errors.New("no ResourceSync Source Description or Capability List found")

// Discovery is what Discover found: the Source Description, if the Source
// has one that could be reached, and the Capability Lists.
type Discovery struct {
	// Start is the URI discovery started from.
	Start string
	// SourceDescription is the URI of the Source Description, "" if none
	// was reached (a Capability List without an up link, or one whose up
	// link failed).
	SourceDescription string
	// CapabilityLists are the Source Description's Capability Lists in
	// document order, or, without a Source Description, the Capability List
	// that was found.
	CapabilityLists []CapabilityList
	// Reached is the Capability List the start URI led to (itself, or by a
	// resourcesync link, or up from a capability document), "" when the
	// Source Description was found directly. It is the collection the
	// start URI belongs to, which a caller harvesting one collection per
	// configured URI should prefer over the Source Description's first.
	Reached string
	// Via lists the hops from Start to the document found: "start" when
	// Start itself is the Source Description or Capability List, else a
	// comma-separated path such as "HTML link, up link" or "robots.txt, up
	// link, up link" (hops: "Link header", "HTML link", "well-known URI",
	// "robots.txt", "up link").
	Via string
	// Tried lists every URI fetched and what came of it, in order, for
	// logs and for the operator.
	Tried []string
	// Index is the Capability List Index the Capability Lists were read
	// from, when the Source offers one instead of a Source Description.
	Index string
}

// CapabilityList is one Capability List of a Source.
type CapabilityList struct {
	URI string
	// DescribedBy is the href of its rs:ln rel="describedby", if any: a
	// description of the set of resources it covers.
	DescribedBy string
	// Links are its rs:ln links as the Source Description (or, without
	// one, the Capability List itself) states them.
	Links []resourcesync.Link
}

// Discovery's bounds: hops along links, Sitemap lines of robots.txt
// looked at, bytes of an HTML page or robots.txt read, and Capability
// Lists kept from one Source Description.
const (
	maxDiscoverDepth  = 6
	maxRobotsSitemaps = 20
	maxScanBytes      = 256 << 10
	maxCapLists       = 10_000
)

// Discover finds the Source Description (or, when there is none, the
// Capability List) of a Source from any URI an operator has for it,
// following spec section 6.3: the URI itself may be a Source Description,
// a Capability List or any other capability document (whose rs:ln
// rel="up" links lead upwards), an HTML page with <link rel="resourcesync">,
// or any resource with a Link rel="resourcesync" header; failing those, the
// host's well-known URI /.well-known/resourcesync and the Sitemap lines of
// its robots.txt are tried. A Client without a Policy is given one whose
// base is uri. The error, when nothing is found, wraps ErrNotDiscovered
// and every failure met, and lists what was tried.
func Discover(ctx context.Context, c *upstream.Client, source string, uri string) (*Discovery, error) {
	if c.Policy() == nil {
		p, err := c.NewPolicy(uri)
		if err != nil {
			return nil, fmt.Errorf("discover source %q from %s: %w", source, uri, err)
		}
		c = c.WithPolicy(p)
	}
	d := &discoverer{c: c, source: source, seen: map[string]bool{}, out: &Discovery{Start: uri}}
	if d.visit(ctx, uri, "start", 0) {
		return d.out, nil
	}
	if root, err := url.Parse(uri); err == nil && ctx.Err() == nil {
		if d.visit(ctx, root.ResolveReference(&url.URL{Path: "/.well-known/resourcesync"}).String(), "well-known URI", 0) {
			return d.out, nil
		}
		if d.robots(ctx, root.ResolveReference(&url.URL{Path: "/robots.txt"}).String()) {
			return d.out, nil
		}
	}
	errs := append([]error{ErrNotDiscovered}, d.errs...)
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return nil, &notDiscovered{msg: d.failure(uri, ctx.Err()), errs: errs}
}

// notDiscovered is Discover's error: one line that wraps every failure met
// without repeating their text, each of which already names the Source.
type notDiscovered struct {
	msg  string
	errs []error
}

func (e *notDiscovered) Error() string   { return e.msg }
func (e *notDiscovered) Unwrap() []error { return e.errs }

// failure says why discovery from uri failed: when every URI tried
// failed the same way (the host refuses connections, the context ended),
// that cause first and the URIs after it; otherwise what came of each.
func (d *discoverer) failure(uri string, ctxErr error) string {
	cause, same := "", len(d.errs) > 0 && len(d.errs) == len(d.out.Tried)
	for _, err := range d.errs {
		c := unwrapUpstream(err)
		if cause == "" {
			cause = c
		}
		same = same && c == cause
	}
	if ctxErr != nil {
		cause, same = ctxErr.Error(), true
	}
	if same {
		uris := make([]string, len(d.out.Tried))
		for i, t := range d.out.Tried {
			uris[i], _, _ = strings.Cut(t, ": ")
		}
		if len(uris) > 0 {
			cause += " (" + strings.Join(uris, ", ") + ")"
		}
		return fmt.Sprintf("discover source %q from %s: %s: %v", d.source, uri, cause, ErrNotDiscovered)
	}
	return fmt.Sprintf("discover source %q from %s: %v; tried: %s", d.source, uri, ErrNotDiscovered, strings.Join(d.out.Tried, "; "))
}

type discoverer struct {
	c      *upstream.Client
	source string
	seen   map[string]bool
	errs   []error
	out    *Discovery
}

func (d *discoverer) note(format string, args ...any) {
	d.out.Tried = append(d.out.Tried, fmt.Sprintf(format, args...))
}

func (d *discoverer) get(ctx context.Context, uri string, maxBytes int64) (*upstream.Response, error) {
	resp, err := d.c.Get(ctx, upstream.Request{URI: uri, Source: d.source, Gzip: true, MaxBytes: maxBytes})
	if err != nil {
		d.errs = append(d.errs, err)
		d.note("%s: %v", uri, unwrapUpstream(err))
	}
	return resp, err
}

// unwrapUpstream shortens an *upstream.Error for the Tried list, which
// already names the URI.
func unwrapUpstream(err error) string {
	var e *upstream.Error
	if errors.As(err, &e) {
		if e.Status != 0 {
			return fmt.Sprintf("%d", e.Status)
		}
		if e.Err != nil {
			return e.Err.Error()
		}
		return e.Kind.Error()
	}
	return err.Error()
}

// visit fetches uri and reports whether it led to a Source Description or
// a Capability List: by being one, by an up link, or by a resourcesync
// link in its headers or HTML.
func (d *discoverer) visit(ctx context.Context, uri, via string, depth int) bool {
	if depth > maxDiscoverDepth || d.seen[uri] || ctx.Err() != nil {
		return false
	}
	d.seen[uri] = true
	resp, err := d.get(ctx, uri, 0)
	if err != nil {
		return false
	}
	type hop struct{ uri, how string }
	var next []hop
	for _, l := range resp.Links {
		if l.HasRel("resourcesync") {
			next = append(next, hop{l.Target, "Link header"})
		}
	}
	rec := &prefix{r: resp.Body, max: maxScanBytes}
	rd, err := resourcesync.NewReader(rec, resourcesync.Limits{MaxEntries: maxCapLists})
	switch {
	case err == nil:
		found, up := d.document(ctx, resp.URI, rd, via)
		resp.Body.Close()
		if found {
			return true
		}
		if up != "" {
			next = append(next, hop{up, "up link"})
		}
	case isHTML(resp.Header.Get("Content-Type"), rec.buf):
		page := rec.rest()
		resp.Body.Close()
		links := htmlLinks(page, resp.URI)
		d.note("%s: HTML page with %d resourcesync link(s)", resp.URI, len(links))
		for _, l := range links {
			next = append(next, hop{l, "HTML link"})
		}
	default:
		resp.Body.Close()
		d.note("%s: not a ResourceSync document: %v", resp.URI, err)
	}
	for _, h := range next {
		how := h.how
		if via != "start" {
			how = via + ", " + how
		}
		if d.visit(ctx, h.uri, how, depth+1) {
			return true
		}
	}
	return false
}

// document looks at a ResourceSync document read from uri. A Source
// Description or Capability List is recorded (found); any other capability
// document gives the URI to go up to.
func (d *discoverer) document(ctx context.Context, uri string, rd *resourcesync.Reader, via string) (found bool, up string) {
	h := rd.Header()
	kind := h.Kind()
	d.note("%s: %s", uri, kind)
	upHref := ""
	if l := h.Link("up"); l != nil {
		upHref = resolve(uri, l.Href)
	} else if l := h.Link("index"); l != nil {
		upHref = resolve(uri, l.Href)
	}
	switch kind {
	case resourcesync.KindSourceDescription:
		d.out.Via = via
		if h.Root == resourcesync.SitemapIndex {
			d.descriptionIndex(ctx, uri, rd)
			return true, ""
		}
		d.sourceDescription(uri, rd)
		return true, ""
	case resourcesync.KindCapabilityList:
		d.out.Via = via
		if h.Root == resourcesync.SitemapIndex {
			d.capabilityListIndex(uri, rd)
			return true, ""
		}
		d.out.Reached = uri
		d.out.CapabilityLists = []CapabilityList{capList(uri, h.Links)}
		if l := h.Link("up"); l != nil {
			d.up(ctx, resolve(uri, l.Href))
		}
		return true, ""
	case resourcesync.KindSitemap, resourcesync.KindUnknown:
		return false, ""
	}
	return false, upHref
}

// up reads the Source Description a Capability List points up to. When it
// fails, what was found so far stands.
func (d *discoverer) up(ctx context.Context, uri string) {
	if d.seen[uri] {
		return
	}
	d.seen[uri] = true
	resp, err := d.get(ctx, uri, 0)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	rd, err := resourcesync.NewReader(resp.Body, resourcesync.Limits{MaxEntries: maxCapLists})
	if err != nil {
		d.note("%s: up link of the Capability List: %v", uri, err)
		return
	}
	if k := rd.Header().Kind(); k != resourcesync.KindSourceDescription {
		d.note("%s: up link of the Capability List is a %s, not a Source Description", uri, k)
		return
	}
	found := d.out.CapabilityLists[0]
	if d.out.Via == "start" {
		d.out.Via = "up link"
	} else {
		d.out.Via += ", up link"
	}
	d.sourceDescription(resp.URI, rd)
	for _, cl := range d.out.CapabilityLists {
		if cl.URI == found.URI {
			return
		}
	}
	d.out.CapabilityLists = append(d.out.CapabilityLists, found)
}

// sourceDescription records a Source Description and its Capability Lists.
func (d *discoverer) sourceDescription(uri string, rd *resourcesync.Reader) {
	d.out.SourceDescription = uri
	d.out.CapabilityLists = nil
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return
		}
		var re *resourcesync.Error
		if err != nil && errors.As(err, &re) && !re.Fatal {
			d.note("%s: entry skipped: %v", uri, err)
			continue
		}
		if err != nil {
			d.errs = append(d.errs, err)
			d.note("%s: %v", uri, err)
			return
		}
		if e.MD != nil && e.MD.Capability != "" && e.MD.Capability != resourcesync.CapCapabilityList {
			d.note("%s: entry %s has capability %q, not a Capability List", uri, e.Loc, e.MD.Capability)
			continue
		}
		d.out.CapabilityLists = append(d.out.CapabilityLists, capList(resolve(uri, e.Loc), e.Links))
	}
}

func capList(uri string, links []resourcesync.Link) CapabilityList {
	cl := CapabilityList{URI: uri, Links: links}
	for _, l := range links {
		if l.Rel == "describedby" {
			cl.DescribedBy = resolve(uri, l.Href)
			break
		}
	}
	return cl
}

// robots reads the Sitemap lines of robots.txt and visits each, looking
// for a ResourceSync document (a Resource List, usually).
func (d *discoverer) robots(ctx context.Context, uri string) bool {
	resp, err := d.get(ctx, uri, maxScanBytes)
	if err != nil {
		return false
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		d.errs = append(d.errs, err)
		d.note("%s: %v", uri, err)
		return false
	}
	var maps []string
	for line := range strings.Lines(string(body)) {
		line, _, _ = strings.Cut(line, "#")
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "sitemap") && strings.TrimSpace(v) != "" {
			maps = append(maps, resolve(resp.URI, strings.TrimSpace(v)))
		}
	}
	d.note("%s: %d Sitemap line(s)", resp.URI, len(maps))
	for i, m := range maps {
		if i == maxRobotsSitemaps {
			d.note("%s: Sitemap lines after the first %d ignored", resp.URI, maxRobotsSitemaps)
			break
		}
		if d.visit(ctx, m, "robots.txt", 1) {
			return true
		}
	}
	return false
}

func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := b.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ref
	}
	return r.String()
}

// prefix passes a body through to the document reader while keeping its
// first max bytes, so that a body that turns out to be HTML can still be
// scanned for links.
type prefix struct {
	r   io.Reader
	buf []byte
	max int
}

func (p *prefix) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if room := p.max - len(p.buf); room > 0 {
		p.buf = append(p.buf, b[:min(n, room)]...)
	}
	return n, err
}

// rest reads on, up to max bytes in all, and returns what was kept.
func (p *prefix) rest() []byte {
	if room := p.max - len(p.buf); room > 0 {
		more, _ := io.ReadAll(io.LimitReader(p.r, int64(room)))
		p.buf = append(p.buf, more...)
	}
	return p.buf
}

func isHTML(contentType string, start []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	s := bytes.ToLower(bytes.TrimSpace(start[:min(len(start), 512)]))
	return bytes.HasPrefix(s, []byte("<!doctype html")) || bytes.HasPrefix(s, []byte("<html")) || bytes.Contains(s, []byte("<head"))
}

// htmlLinks returns the hrefs of <link rel="resourcesync"> elements in
// page, resolved against <base href> or uri. It is a small tolerant
// scanner: comments are skipped, attributes may be quoted with either
// quote or not at all, names are case-insensitive.
func htmlLinks(page []byte, uri string) []string {
	base := uri
	var out []string
	for i := 0; i < len(page); {
		lt := bytes.IndexByte(page[i:], '<')
		if lt < 0 {
			break
		}
		i += lt + 1
		if bytes.HasPrefix(page[i:], []byte("!--")) {
			end := bytes.Index(page[i+3:], []byte("-->"))
			if end < 0 {
				break
			}
			i += 3 + end + 3
			continue
		}
		name, attrs, n := htmlTag(page[i:])
		i += n
		switch name {
		case "base":
			if h, ok := attrs["href"]; ok {
				base = resolve(uri, h)
			}
		case "link":
			for _, rel := range strings.Fields(strings.ToLower(attrs["rel"])) {
				if rel == "resourcesync" && attrs["href"] != "" {
					out = append(out, resolve(base, attrs["href"]))
					break
				}
			}
		}
	}
	return out
}

// htmlTag reads a start tag after its '<': its lower-case name, its
// attributes (entities decoded) and how many bytes it spans.
func htmlTag(s []byte) (name string, attrs map[string]string, n int) {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' }
	for n < len(s) && !isSpace(s[n]) && s[n] != '>' {
		n++
	}
	name = strings.ToLower(string(s[:n]))
	if name != "link" && name != "base" {
		return name, nil, n
	}
	attrs = map[string]string{}
	for n < len(s) && s[n] != '>' {
		for n < len(s) && isSpace(s[n]) {
			n++
		}
		start := n
		for n < len(s) && !isSpace(s[n]) && s[n] != '>' && s[n] != '=' {
			n++
		}
		key := strings.ToLower(string(s[start:n]))
		val := ""
		if n < len(s) && s[n] == '=' {
			n++
			if n < len(s) && (s[n] == '"' || s[n] == '\'') {
				q := s[n]
				end := bytes.IndexByte(s[n+1:], q)
				if end < 0 {
					return name, attrs, len(s)
				}
				val = string(s[n+1 : n+1+end])
				n += end + 2
			} else {
				start := n
				for n < len(s) && s[n] != ' ' && s[n] != '\t' && s[n] != '\n' && s[n] != '\r' && s[n] != '>' {
					n++
				}
				val = string(s[start:n])
			}
		}
		if _, dup := attrs[key]; key != "" && !dup {
			attrs[key] = html.UnescapeString(val)
		}
	}
	return name, attrs, n
}
