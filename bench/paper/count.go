package main

import (
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// counter is an HTTP front on loopback that counts the bytes of every
// response body it sends: what a Destination transferred from the Source
// behind it, and of that what were ResourceSync documents (the Source
// Description and every .xml), the rest being bitstreams.
type counter struct {
	URL   string
	srv   *http.Server
	ln    net.Listener
	h     atomic.Pointer[http.Handler]
	bytes atomic.Int64
	docs  atomic.Int64
}

func newCounter() (*counter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &counter{URL: "http://" + ln.Addr().String(), ln: ln}
	c.srv = &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	go c.srv.Serve(ln)
	return c, nil
}

// Forward serves h behind the counter.
func (c *counter) Forward(h http.Handler) { c.h.Store(&h) }

// ForwardTo proxies to the server at base.
func (c *counter) ForwardTo(base string) {
	u, _ := url.Parse(base)
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorLog = log.New(io.Discard, "", 0) // a Destination hanging up is not news
	c.Forward(p)
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := c.h.Load()
	if h == nil {
		http.Error(w, "not ready", http.StatusServiceUnavailable)
		return
	}
	cw := &countingWriter{ResponseWriter: w, n: &c.bytes}
	if isDocument(r.URL.Path) {
		cw.doc = &c.docs
	}
	(*h).ServeHTTP(cw, r)
}

// isDocument tells a ResourceSync document's path from a bitstream's.
func isDocument(p string) bool {
	return p == "/.well-known/resourcesync" || strings.HasSuffix(p, ".xml")
}

// Bytes is how many body bytes were sent since the last Reset.
func (c *counter) Bytes() int64 { return c.bytes.Load() }

// DocumentBytes is how many of Bytes were documents'.
func (c *counter) DocumentBytes() int64 { return c.docs.Load() }

func (c *counter) Reset() {
	c.bytes.Store(0)
	c.docs.Store(0)
}

func (c *counter) Close() error {
	err := c.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

type countingWriter struct {
	http.ResponseWriter
	n   *atomic.Int64
	doc *atomic.Int64 // nil for a bitstream
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	if w.doc != nil {
		w.doc.Add(int64(n))
	}
	return n, err
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
