package harvester

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// document is one ResourceSync document being read.
type document struct {
	uri  string
	r    *resourcesync.Reader
	body io.Closer
	val  validators
	span trace.Span
	err  error // the first error reading it, for its span
	p    *pass // told of the reader's warnings when d is closed
}

func (d *document) Close() error {
	endSpan(d.span, d.err)
	d.p.noteWarnings(d)
	return d.body.Close()
}

// noteWarnings passes what the document reader tolerated in d (zone-less
// times, base64 digests, the case of a capability...) to the pass's count
// (tolerate.go) as d is closed: once per document and kind.
func (p *pass) noteWarnings(d *document) {
	if p == nil {
		return
	}
	for _, w := range d.r.Warnings() {
		p.tolerateReader(d.uri, string(w.Kind), w.Count)
	}
}

// errNotModified is returned by open for a conditional GET answered 304.
var errNotModified = errors.New("not modified")

// open GETs uri (conditionally when prev has validators) and reads its
// header. The error names the Source and the URI; it wraps
// errNotModified, an *upstream.Error or a *resourcesync.Error.
func (p *pass) open(ctx context.Context, uri string, prev validators) (d *document, err error) {
	ctx, span := p.startDocument(ctx, uri)
	defer func() {
		if err != nil {
			endSpan(span, err)
		}
	}()
	var resp *upstream.Response
	err = p.slot.waiting(ctx, func() error {
		return p.watch.waiting(func() (err error) {
			resp, err = p.client.Get(ctx, upstream.Request{
				URI:          uri,
				Source:       p.src.Name,
				ETag:         prev.ETag,
				LastModified: prev.LastModified,
				Gzip:         true,
				MaxBytes:     p.h.cfg.MaxDocumentBytes,
			})
			return err
		})
	})
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindFetch).Inc()
		if ue := (*upstream.Error)(nil); errors.As(err, &ue) {
			return nil, err // it names the Source, the request and the URI
		}
		return nil, fmt.Errorf("source %s: GET %s: %w", p.src.Name, uri, err)
	}
	if resp.NotModified {
		resp.Body.Close()
		return nil, fmt.Errorf("source %s: %s: %w", p.src.Name, uri, errNotModified)
	}
	lim := resourcesync.DefaultLimits()
	lim.MaxEntries = p.h.cfg.MaxEntries
	lim.MaxBytes = p.h.cfg.MaxDocumentBytes
	lim.MaxDecompressed = p.h.cfg.MaxDocumentBytes
	body := newSpoolBody(p.slot.reader(ctx, resp.Body))
	var r *resourcesync.Reader
	p.watch.waiting(func() error {
		r, err = resourcesync.NewReaderAt(body, resp.URI, lim)
		return nil
	})
	if err != nil {
		body.Close()
		p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
		return nil, fmt.Errorf("source %s: read %s: %w", p.src.Name, uri, err)
	}
	p.bodies = append(p.bodies, body)
	return &document{uri: uri, r: r, body: body, val: validators{ETag: resp.ETag, LastModified: resp.LastModified}, span: span, p: p}, nil
}

// next returns the document's next entry, io.EOF at its end. An entry the
// reader could not make sense of is logged, counted and skipped; bad
// reports whether that happened, so that a baseline does not take a
// skipped entry for a deleted resource.
func (p *pass) next(d *document) (e *resourcesync.Entry, err error) {
	for {
		p.watch.waiting(func() error {
			e, err = d.r.Next()
			return nil
		})
		if err == nil {
			p.listed.Add(1)
			p.absolute(d, e)
		}
		if err == nil || errors.Is(err, io.EOF) {
			p.watch.progressed()
		}
		if err == nil || errors.Is(err, io.EOF) {
			return e, err
		}
		var rerr *resourcesync.Error
		if errors.As(err, &rerr) && !rerr.Fatal {
			p.badEntries++
			msg := fmt.Sprintf("line %d: %v", rerr.Line, rerr.Err)
			p.refuse(d.uri, kindEntry, msg, func() string { return msg })
			continue
		}
		p.h.m.errors.WithLabelValues(p.src.Name, kindDocument).Inc()
		err = fmt.Errorf("source %s: read %s: %w", p.src.Name, d.uri, err)
		if d.err == nil {
			d.err = err
		}
		return nil, err
	}
}

// absolute resolves a relative loc against the document's URL (spec:
// URIs are absolute; some producers write paths), counting the document
// as tolerated.
func (p *pass) absolute(d *document, e *resourcesync.Entry) {
	if u, err := url.Parse(e.Loc); err != nil || u.IsAbs() {
		return
	}
	p.tolerate(d.uri, tolRelativeURI, 1)
	e.Loc = resolve(d.uri, e.Loc)
}

// allowed reports whether loc may be queued: inside the Source's Policy.
// A loc outside it is counted and summarised (refuse), never queued.
func (p *pass) allowed(d *document, e *resourcesync.Entry) bool {
	err := p.policy.Allow(e.Loc)
	if err == nil {
		return true
	}
	p.refuse(d.uri, kindForbiddenLoc, e.Loc, func() string { return fmt.Sprintf("line %d: %s: %v", e.Line, e.Loc, err) })
	return false
}

// errEOF is io.EOF, named for readability where entries are walked.
var errEOF = io.EOF
