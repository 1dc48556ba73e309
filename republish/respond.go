package republish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

// reply describes a generated document before it is written: what it is,
// the validators of the version about to be written, and how to write it.
type reply struct {
	doc         string // metrics label
	contentType string
	etag        string // quoted, strong, of the identity encoding
	modified    time.Time
	// closed marks documents whose entries no longer change (closed
	// Change Lists), which caches may keep for a day; their links may still
	// gain a rewritten target, so they are revalidated after that.
	closed bool
	write  func(w io.Writer) (entries int, err error)
}

// etagOf derives a strong entity tag from the parts that determine a
// document's bytes.
func etagOf(parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
}

// send answers a document request: 304 when the client's copy is current,
// else the document, gzip-compressed when the client accepts it. The gzip
// variant has its own entity tag, as RFC 9110 asks of a different
// representation. An error while streaming cannot change a status already
// sent, so the connection is aborted and the client sees a truncated body
// rather than a short but well-formed document.
func (s *Server) send(w http.ResponseWriter, r *http.Request, rp reply) {
	gz := acceptsGzip(r)
	etag := rp.etag
	if gz {
		etag = strings.TrimSuffix(etag, `"`) + `-gzip"`
	}
	h := w.Header()
	h.Set("Content-Type", rp.contentType)
	h.Add("Vary", "Accept-Encoding")
	h.Set("ETag", etag)
	if !rp.modified.IsZero() {
		h.Set("Last-Modified", rp.modified.UTC().Format(http.TimeFormat))
	}
	if rp.closed {
		h.Set("Cache-Control", "public, max-age=86400")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if fresh(r, rp.etag, rp.modified) {
		s.m.requests.WithLabelValues(rp.doc, "304").Inc()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	s.m.requests.WithLabelValues(rp.doc, "200").Inc()
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	key := s.cacheKey(r, rp, etag)
	if s.sendCached(w, r, rp.doc, key) {
		return
	}
	cw := &countingWriter{w: w}
	var sink io.Writer = cw
	var fill *docFill
	if key != "" {
		if fill = s.cache.fill(key); fill != nil {
			sink = io.MultiWriter(cw, fill)
		}
	}
	out := sink
	var zw *gzip.Writer
	if gz {
		zw = gzipWriters.Get().(*gzip.Writer)
		zw.Reset(sink)
		out = zw
	}
	n, err := rp.write(out)
	if err == nil && zw != nil {
		if err = zw.Close(); err == nil {
			gzipWriters.Put(zw)
		}
	}
	if fill != nil {
		fill.commit(err == nil)
	}
	s.m.bytes.WithLabelValues(rp.doc).Add(float64(cw.n))
	s.m.entries.WithLabelValues(rp.doc).Add(float64(n))
	if err != nil {
		if cw.err != nil || r.Context().Err() != nil {
			// The Destination closed the connection early: its own
			// business, not a fault of the node.
			s.log.DebugContext(r.Context(), "republish: client went away before the document ended", "uri", r.URL.String(), "doc", rp.doc, "err", err)
		} else {
			s.log.ErrorContext(r.Context(), "republish: document aborted", "uri", r.URL.String(), "doc", rp.doc, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
}

// gzipWriters are kept between documents: a gzip.Writer allocates most of
// a megabyte. They compress at BestSpeed: on a Resource List the fastest
// level comes within a tenth of the default's size (6.8 against 7.4 times
// smaller, with random hashes), and at the default level compressing cost
// more CPU than reading the catalog. The writer is klauspost/compress's
// (already among the NATS server's dependencies): on Resource List parts
// it compresses about 1.6 times as fast as compress/gzip at the same level,
// to a slightly smaller size.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// cached are the documents worth keeping in the document cache: the
// lists, whose every byte is a catalog read.
var cached = map[string]bool{"resourcelist": true, "resourcelist-part": true, "changelist": true}

// cacheKey names the representation about to be sent, as the catalog is
// now, in the document cache; "" when it is not to be cached. The catalog
// revision is part of it, as the entity tag alone does not cover what a
// document's links take from other collections.
func (s *Server) cacheKey(r *http.Request, rp reply, etag string) string {
	if s.cache == nil || !cached[rp.doc] {
		return ""
	}
	rev, err := s.revision(r.Context())
	if err != nil {
		return ""
	}
	return etag + "|" + strconv.FormatUint(rev, 10)
}

// sendCached sends the document under key from the cache, reporting
// whether it had it. Its bytes are those the first sending wrote, so a
// client cut off midway sees what it would have seen then.
func (s *Server) sendCached(w http.ResponseWriter, r *http.Request, doc, key string) bool {
	if key == "" {
		return false
	}
	f, size, ok := s.cache.open(key)
	if !ok {
		return false
	}
	defer f.Close()
	s.m.cacheHits.WithLabelValues(doc).Inc()
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	n, err := io.Copy(w, f) // the response's ReadFrom: sendfile
	s.m.bytes.WithLabelValues(doc).Add(float64(n))
	if err != nil {
		s.log.DebugContext(r.Context(), "republish: cached document cut short", "uri", r.URL.String(), "doc", doc, "err", err)
		panic(http.ErrAbortHandler)
	}
	return true
}

// fresh reports whether the client's copy, in either encoding, is current:
// both variants carry the same document.
func fresh(r *http.Request, etag string, modified time.Time) bool {
	return notModified(r, etag, strings.TrimSuffix(etag, `"`)+`-gzip"`, modified)
}

// notModified applies If-None-Match, or If-Modified-Since when there is no
// If-None-Match (RFC 9110 13.2.2).
func notModified(r *http.Request, etag, gzEtag string, modified time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag || t == gzEtag {
				return true
			}
		}
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || modified.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	return err == nil && !modified.Truncate(time.Second).After(t)
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// countingWriter counts the bytes sent and keeps the first error sending
// them, which tells a client gone from a document that failed.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}
