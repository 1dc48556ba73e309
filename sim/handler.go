package sim

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Paths of the Source's documents.
const (
	PathDescription  = "/.well-known/resourcesync"
	PathCapabilities = "/capabilitylist.xml"
	PathResourceList = "/resourcelist.xml"
	PathChangeList   = "/changelist.xml"
)

// Handler serves the Source: its documents, its bitstreams under /res/, and
// robots.txt and a home page for discovery.
func (s *Source) Handler() http.Handler {
	return http.HandlerFunc(s.serve)
}

func (s *Source) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	s.countRequest(p)
	if h := s.channelHandler(p); h != nil {
		h.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, _ := s.faults.forRequest(p)
	if f.Delay > 0 && !wait(r.Context(), f.Delay) {
		return
	}
	if f.Hold != nil {
		select {
		case <-f.Hold:
		case <-r.Context().Done():
			return
		}
	}
	if f.Status != 0 {
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
		}
		w.WriteHeader(f.Status)
		return
	}
	if f.Trickle > 0 {
		w = &trickleWriter{ResponseWriter: w, ctx: r.Context(), pause: f.Trickle}
	}
	base := s.requestBase(r)
	switch {
	case strings.HasPrefix(p, "/res/"):
		s.serveBitstream(w, r, strings.TrimPrefix(p, "/res/"), base, f)
	case p == "/":
		s.serveHome(w, r, base)
	case p == "/robots.txt":
		s.serveRobots(w, r, base)
	case strings.HasSuffix(p, ".zip"):
		s.servePackage(w, r, p, base)
	default:
		doc, ok := s.document(p)
		if !ok {
			http.NotFound(w, r)
			return
		}
		s.serveDocument(w, r, doc, base, f)
	}
}

// requestBase is the base URL for locs: the one set, or else the request's
// own host.
func (s *Source) requestBase(r *http.Request) string {
	if b := s.BaseURL(); b != "" {
		return b
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// serveDocument answers a request for one XML document, with a weak ETag
// over the Source's state, conditional GET and gzip.
func (s *Source) serveDocument(w http.ResponseWriter, r *http.Request, doc document, base string, f Fault) {
	s.mu.RLock()
	gen := s.gen
	s.mu.RUnlock()
	gz := acceptsGzip(r)
	etag := fmt.Sprintf(`W/"%d-%d-%d`, gen, s.faults.gen.Load(), s.currentPeriod())
	if gz {
		etag += `-gz`
	}
	etag += `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "no-cache")
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/xml; charset=utf-8")
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	if r.Method == http.MethodHead {
		return
	}
	var out io.Writer = w
	if gz {
		zw := gzip.NewWriter(w)
		defer zw.Close()
		out = zw
	}
	// An error here is the client going away, or a fault; the status is
	// already sent, so there is nothing more to tell it.
	_ = doc.write(out, s, base, f)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// etagMatch is the weak comparison If-None-Match calls for.
func etagMatch(header, etag string) bool {
	if header == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// wait pauses for d, or less if ctx ends; it reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// trickleWriter sends a body in 1 KiB chunks with a pause between them.
type trickleWriter struct {
	http.ResponseWriter
	ctx   context.Context
	pause time.Duration
}

func (t *trickleWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 1024)
		m, err := t.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		if f, ok := t.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		p = p[k:]
		if !wait(t.ctx, t.pause) {
			return n, t.ctx.Err()
		}
	}
	return n, nil
}
