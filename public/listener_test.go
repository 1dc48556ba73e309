package public

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
)

// listenHardened serves a plain handler behind the public listener's
// limits on loopback, and returns its address and the listener.
func listenHardened(t *testing.T, cfg Config) (string, *Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	l := Harden(srv, ln, cfg, Routes{Expensive: func(*http.Request) bool { return false }}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), l
}

// get sends one request on a connection of its own from the client
// address from, and returns the status and Retry-After, or the error.
func getFrom(t *testing.T, from, addr string) (int, string, error) {
	t.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("http://" + addr + "/")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// clientAtItsBound serves the public listener with room for maxConns
// connections, one per client and Retry-After 3s, and connects once from
// 127.0.0.2, sending nothing: that client is at its bound.
func clientAtItsBound(t *testing.T, maxConns int) (addr string, l *Listener, silent net.Conn) {
	t.Helper()
	cfg := Defaults()
	cfg.MaxConns, cfg.MaxConnsPerClient, cfg.RetryAfter = maxConns, 1, 3*time.Second
	addr, l = listenHardened(t, cfg)
	silent, err := testutil.DialFrom("127.0.0.2", addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	return addr, l, silent
}

// busyFrom connects from the client address from and sends the first
// line of a request, never finishing its head: a request in flight, which
// the listener must never take for an idle connection.
func busyFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	c, err := testutil.DialFrom(from, addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// A connection the public listener has no room for, in total or for its
// client, is answered 503 with Retry-After, never a bare close the client
// cannot tell from a crash; a new one takes the place of the oldest
// connection that has sent nothing, however new that one is; and a
// connection with a request in flight is never taken.
func TestListenerRefusesWithRetryAfter(t *testing.T) {
	addr, l, silent := clientAtItsBound(t, 2)
	// The client at its bound.
	code, ra, err := getFrom(t, "127.0.0.2", addr)
	if err != nil || code != http.StatusServiceUnavailable || ra != "3" {
		t.Fatalf("a client past max_conns_per_client: status %d, Retry-After %q, error %v; want 503, 3", code, ra, err)
	}
	// Another client fills the listener with a request in flight; the
	// silent connection, a moment old, gives its place at once.
	busyFrom(t, "127.0.0.3", addr)
	if code, _, err = getFrom(t, "127.0.0.4", addr); err != nil || code != http.StatusOK {
		t.Fatalf("a full listener holding a silent connection: status %d, error %v; want 200", code, err)
	}
	silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the silent connection was not closed for the new one: %v", err)
	}
	// Two requests in flight fill it: nothing can give its place. The
	// finished request and the evicted connection are counted out by the
	// server's goroutines, and the second request's bytes reach the
	// listener's side through the kernel: both are waited for.
	testutil.Eventually(t, 10*time.Second, "the finished and the evicted connections to be counted out", func() bool { return l.Open() == 1 })
	busyFrom(t, "127.0.0.5", addr)
	testutil.Eventually(t, 10*time.Second, "both requests in flight to be seen", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.conns) == 2 && l.oldestSilent() == nil
	})
	if code, ra, err = getFrom(t, "127.0.0.6", addr); err != nil || code != http.StatusServiceUnavailable || ra != "3" {
		t.Fatalf("a full listener whose connections all have requests in flight: status %d, Retry-After %q, error %v; want 503, 3", code, ra, err)
	}
}

// A connection whose request has arrived, but which nobody has read yet,
// is never taken for a silent one, however long it waits; one that has
// sent nothing is. The listener here is not served, so that nothing reads
// what arrives.
func TestRequestWaitingUnreadIsNotEvicted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := &Listener{Listener: ln, max: 1, perClient: 8, writeTimeout: time.Second, retryAfter: time.Second,
		m: newLimits(prometheus.NewRegistry()), log: slog.New(slog.DiscardHandler),
		conns: map[*limitedConn]struct{}{}, byClient: map[string]int{}}
	// admitNext admits the next connection as Accept would; nil when it
	// is refused.
	admitNext := func() *limitedConn {
		t.Helper()
		raw, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		return l.admit(raw)
	}
	asking, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer asking.Close()
	first := admitNext()
	if _, err := io.WriteString(asking, "GET / HTTP/1.1\r\nHost: viaduct\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "the request to reach the accepted socket", func() bool { return pending(first.Conn) })
	// A newcomer finds no silent connection: it is refused, answered 503
	// once it asks, and the waiting request keeps its connection.
	newcomer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer newcomer.Close()
	if admitNext() != nil {
		t.Fatal("a newcomer was admitted beside a request waiting unread")
	}
	newcomer.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(newcomer, "GET / HTTP/1.1\r\nHost: viaduct\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(newcomer), nil); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a newcomer beside a request waiting unread: %v %v, want 503", resp, err)
	}
	if l.Open() != 1 || first.dropped {
		t.Fatalf("the connection with a request waiting was taken for the newcomer")
	}
	// Once its request is read and it is idle again with nothing sent,
	// it is the one a newcomer takes.
	if _, err := http.ReadRequest(bufio.NewReader(first)); err != nil {
		t.Fatal(err)
	}
	l.state(first, http.StateIdle)
	if pending(first.Conn) {
		t.Fatal("bytes still pending after the request was read")
	}
	taker, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer taker.Close()
	if admitNext() == nil {
		t.Fatal("a newcomer was refused beside a silent connection")
	}
	asking.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := asking.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the silent connection was not closed for the newcomer: %v", err)
	}
}

// A refused connection is answered once its client has sent a request,
// not before: an answer that comes first is one the client's HTTP stack
// never asked for (Go's drops it and reports a broken connection). One
// that never asks is closed unanswered.
func TestRefusedClientIsAnsweredOnceItAsks(t *testing.T) {
	addr, _, _ := clientAtItsBound(t, 4)
	early, err := testutil.DialFrom("127.0.0.2", addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	early.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := early.Read(make([]byte, 1)); n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a refused client was sent %d bytes (%v) before its request", n, err)
	}
	early.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(early, "GET / HTTP/1.1\r\nHost: viaduct\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(early), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("a refused client's request: %v %v, want 503 with Retry-After 3", resp, err)
	}
	mute, err := testutil.DialFrom("127.0.0.2", addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	mute.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(mute); len(b) > 0 || err != nil {
		t.Fatalf("a refused client that never asks: read %q (%v), want a close and nothing else", b, err)
	}
}
