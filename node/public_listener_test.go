package node

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
)

// listenHardened serves a plain handler behind the public listener's
// limits on loopback, and returns its address.
func listenHardened(t *testing.T, cfg PublicConfig) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })}
	l := hardenPublic(srv, ln, cfg, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
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
func clientAtItsBound(t *testing.T, maxConns int) (addr string, silent net.Conn) {
	t.Helper()
	cfg := Defaults().Public
	cfg.MaxConns, cfg.MaxConnsPerClient, cfg.RetryAfter = maxConns, 1, 3*time.Second
	addr = listenHardened(t, cfg)
	silent, err := dialFrom("127.0.0.2", addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	return addr, silent
}

// A connection the public listener has no room for, in total or for its
// client, is answered 503 with Retry-After, never a bare close the client
// cannot tell from a crash; and a connection accepted a moment ago is not
// evicted for a newer one, which would cut a request not yet read.
func TestListenerRefusesWithRetryAfter(t *testing.T) {
	addr, silent := clientAtItsBound(t, 2)
	// The client at its bound.
	code, ra, err := getFrom(t, "127.0.0.2", addr)
	if err != nil || code != http.StatusServiceUnavailable || ra != "3" {
		t.Fatalf("a client past max_conns_per_client: status %d, Retry-After %q, error %v; want 503, 3", code, ra, err)
	}
	// Another client fills the listener; the silent connection is too new
	// to give its place.
	other, err := dialFrom("127.0.0.3", addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if code, ra, err = getFrom(t, "127.0.0.4", addr); err != nil || code != http.StatusServiceUnavailable || ra != "3" {
		t.Fatalf("a full listener whose connections are all new: status %d, Retry-After %q, error %v; want 503, 3", code, ra, err)
	}
	// Once idle past the grace, the oldest idle connection makes room.
	time.Sleep(evictGrace)
	if code, _, err = getFrom(t, "127.0.0.4", addr); err != nil || code != http.StatusOK {
		t.Fatalf("a full listener with connections idle past the grace: status %d, error %v; want 200", code, err)
	}
	silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the connection idle the longest was not closed for the new one: %v", err)
	}
}

// A refused connection is answered once its client has sent a request,
// not before: an answer that comes first is one the client's HTTP stack
// never asked for (Go's drops it and reports a broken connection). One
// that never asks is closed unanswered.
func TestRefusedClientIsAnsweredOnceItAsks(t *testing.T) {
	addr, _ := clientAtItsBound(t, 4)
	early, err := dialFrom("127.0.0.2", addr, 0)
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
	mute, err := dialFrom("127.0.0.2", addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	mute.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(mute); len(b) > 0 || err != nil {
		t.Fatalf("a refused client that never asks: read %q (%v), want a close and nothing else", b, err)
	}
}
