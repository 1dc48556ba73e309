package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Server is a Source listening on a TCP address: what the sim command runs
// and what tests of other packages harvest from.
type Server struct {
	*Source
	// URL is the Source's base URL, like http://127.0.0.1:41234.
	URL  string
	srv  *http.Server
	done chan error
}

// Listen serves src on addr (for example "127.0.0.1:0") until Close, and
// fixes src's base URL to the address it got. With a logger, every request
// is logged.
func Listen(addr string, src *Source, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("simulated Source: listen on %s: %w", addr, err)
	}
	url := "http://" + ln.Addr().String()
	if err := src.SetBaseURL(url); err != nil {
		ln.Close()
		return nil, err
	}
	h := src.Handler()
	if log != nil {
		h = logRequests(h, log, url)
	}
	s := &Server{
		Source: src,
		URL:    url,
		srv:    &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done:   make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, waiting up to five seconds for requests in
// flight (trickling ones are cut off).
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// logRequests logs every request with what was answered.
func logRequests(h http.Handler, log *slog.Logger, source string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		log.Info("served", "source", source, "uri", r.URL.RequestURI(), "method", r.Method,
			"status", rec.status, "bytes", rec.n, "gzip", rec.Header().Get("Content-Encoding") == "gzip",
			"duration", time.Since(start))
	})
}

// statusRecorder notes the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	n      int64
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	n, err := r.ResponseWriter.Write(p)
	r.n += int64(n)
	return n, err
}

// Flush passes flushes on, so that trickled responses still trickle.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

var _ http.Flusher = (*statusRecorder)(nil)
