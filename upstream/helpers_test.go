package upstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sleeps records the waits the Client asked for instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// testConfig allows loopback (httptest listens on 127.0.0.1), records
// sleeps and lifts the request rate so tests never wait on it.
func testConfig(s *sleeps) Config {
	cfg := DefaultConfig()
	cfg.AllowLoopback = true
	cfg.PerHostRate = 1e6
	cfg.PerHostBurst = 1000
	cfg.ConnectTimeout = 5 * time.Second
	cfg.RequestTimeout = 20 * time.Second
	if s != nil {
		cfg.Sleep = s.sleep
	}
	return cfg
}

// newClient builds a Client from cfg with a Policy whose base is base.
func newClient(t *testing.T, cfg Config, base string) *Client {
	t.Helper()
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	p, err := NewPolicy(base, cfg)
	if err != nil {
		t.Fatalf("NewPolicy(%q): %v", base, err)
	}
	return c.WithPolicy(p)
}

// server is an httptest server that counts the requests it answers.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t testing.TB, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// readAll reads a Response's body and closes it.
func readAll(t *testing.T, r *Response) ([]byte, error) {
	t.Helper()
	defer r.Body.Close()
	return io.ReadAll(r.Body)
}

// wantKind fails unless err is an *Error of kind.
func wantKind(t *testing.T, err, kind error) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %q has kind %v, want %v", err, e.Kind, kind)
	}
	return e
}

// countingDial dials for real and counts the attempts.
type countingDial struct{ n atomic.Int64 }

func (d *countingDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-time.After(2 * time.Millisecond)
	}
}
