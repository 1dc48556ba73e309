package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryAfterSecondsHonoured(t *testing.T) {
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	})
	var sl sleeps
	c := newClient(t, testConfig(&sl), s.URL)
	resp, err := c.Get(context.Background(), Request{URI: s.URL + "/doc", Source: "sim"})
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	if b, _ := readAll(t, resp); string(b) != "ok" {
		t.Errorf("body %q", b)
	}
	if got := sl.all(); len(got) != 1 || got[0] != time.Second {
		t.Errorf("waits %v, want [1s] from Retry-After", got)
	}
	if resp.Attempts != 2 {
		t.Errorf("Attempts = %d, want 2", resp.Attempts)
	}
}

func TestRetryAfterDateCapped(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var n atomic.Int64
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) {
		case 1:
			w.Header().Set("Retry-After", now.Add(3*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			fmt.Fprint(w, "ok")
		}
	})
	var sl sleeps
	cfg := testConfig(&sl)
	cfg.Now = func() time.Time { return now }
	cfg.RetryAfterMax = 10 * time.Second
	c := newClient(t, cfg, s.URL)
	resp, err := c.Get(context.Background(), Request{URI: s.URL, Source: "sim"})
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	got := sl.all()
	if len(got) != 2 || got[0] != 3*time.Second || got[1] != 10*time.Second {
		t.Errorf("waits %v, want [3s 10s] (date, then a day capped at retry_after_max)", got)
	}
}

func TestRetry503ThenFail(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	var sl sleeps
	cfg := testConfig(&sl)
	cfg.MaxAttempts = 4
	cfg.BackoffBase = 100 * time.Millisecond
	cfg.BackoffMax = 250 * time.Millisecond
	c := newClient(t, cfg, s.URL)
	uri := s.URL + "/resourcelist.xml"
	_, err := c.Get(context.Background(), Request{URI: uri, Source: "sim"})
	e := wantKind(t, err, ErrTransient)
	if !IsTransient(err) {
		t.Errorf("IsTransient(%v) = false", err)
	}
	want := fmt.Sprintf(`source "sim": GET %s: 503 Service Unavailable after 4 attempts`, uri)
	if err.Error() != want {
		t.Errorf("error\n %q\nwant\n %q", err, want)
	}
	if e.Status != 503 || e.Attempts != 4 || s.hits.Load() != 4 {
		t.Errorf("status %d, attempts %d, server hits %d; want 503, 4, 4", e.Status, e.Attempts, s.hits.Load())
	}
	ceil := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}
	got := sl.all()
	if len(got) != 3 {
		t.Fatalf("waits %v, want 3", got)
	}
	for i, d := range got {
		if d < 0 || d > ceil[i] {
			t.Errorf("wait %d = %v, want within [0, %v]", i+1, d, ceil[i])
		}
	}
}

func TestBackoffBounded(t *testing.T) {
	cfg := testConfig(nil)
	cfg.BackoffBase = time.Second
	cfg.BackoffMax = 7 * time.Second
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt < 200; attempt++ {
		for range 20 {
			if d := c.backoff(attempt); d < 0 || d > cfg.BackoffMax {
				t.Fatalf("backoff(%d) = %v, outside [0, %v]", attempt, d, cfg.BackoffMax)
			}
		}
	}
}

func TestPermanentStatusNotRetried(t *testing.T) {
	for _, tc := range []struct {
		code int
		kind error
	}{
		{http.StatusNotFound, ErrNotFound},
		{http.StatusGone, ErrNotFound},
		{http.StatusForbidden, ErrPermanent},
		{http.StatusBadRequest, ErrPermanent},
		{http.StatusNotImplemented, ErrPermanent},
	} {
		t.Run(fmt.Sprint(tc.code), func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tc.code) })
			var sl sleeps
			c := newClient(t, testConfig(&sl), s.URL)
			_, err := c.Get(context.Background(), Request{URI: s.URL + "/gone", Source: "sim"})
			e := wantKind(t, err, tc.kind)
			if IsTransient(err) || s.hits.Load() != 1 || len(sl.all()) != 0 || e.Status != tc.code {
				t.Errorf("%v: transient=%v hits=%d waits=%v status=%d; want permanent, 1 request, no wait",
					err, IsTransient(err), s.hits.Load(), sl.all(), e.Status)
			}
		})
	}
}

func TestRetryNetworkError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more: connection refused
	var sl sleeps
	cfg := testConfig(&sl)
	cfg.MaxAttempts = 3
	c := newClient(t, cfg, "http://"+addr)
	_, err = c.Get(context.Background(), Request{URI: "http://" + addr + "/x", Source: "sim"})
	e := wantKind(t, err, ErrTransient)
	if e.Attempts != 3 || len(sl.all()) != 2 || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("%v: attempts %d waits %v; want 3 attempts, 2 waits", err, e.Attempts, sl.all())
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	ctx, cancel := context.WithCancel(context.Background())
	cfg := testConfig(nil)
	cfg.MaxAttempts = 100
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}
	c := newClient(t, cfg, s.URL)
	_, err := c.Get(ctx, Request{URI: s.URL, Source: "sim"})
	if !errors.Is(err, context.Canceled) || s.hits.Load() != 1 {
		t.Errorf("got %v after %d requests, want context.Canceled after 1", err, s.hits.Load())
	}
}

func TestRequestTimeoutTransient(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	var sl sleeps
	cfg := testConfig(&sl)
	cfg.RequestTimeout = 50 * time.Millisecond
	cfg.MaxAttempts = 2
	c := newClient(t, cfg, s.URL)
	_, err := c.Get(context.Background(), Request{URI: s.URL, Source: "sim"})
	wantKind(t, err, ErrTransient)
	if !errors.Is(err, context.DeadlineExceeded) || s.hits.Load() != 2 {
		t.Errorf("got %v after %d requests, want a deadline after 2 attempts", err, s.hits.Load())
	}
}
