package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPerHostConcurrency counts, at the server, how many requests are
// under way at once: never more than the limit, and the limit is reached.
func TestPerHostConcurrency(t *testing.T) {
	const limit, requests = 3, 10
	var cur, peak atomic.Int64
	gate := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-gate
		cur.Add(-1)
		io.WriteString(w, "ok")
	})
	cfg := testConfig(nil)
	cfg.PerHostConcurrency = limit
	c := newClient(t, cfg, s.URL)

	var wg sync.WaitGroup
	errs := make(chan error, requests)
	for range requests {
		wg.Go(func() {
			resp, err := c.Get(context.Background(), Request{URI: s.URL, Source: "sim"})
			if err == nil {
				_, err = readAll(t, resp)
			}
			errs <- err
		})
	}
	eventually(t, "the limit of concurrent requests to be reached", func() bool { return cur.Load() == limit })
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("GET: %v", err)
		}
	}
	if peak.Load() != limit || s.hits.Load() != requests {
		t.Errorf("peak %d concurrent of %d requests, want peak %d", peak.Load(), s.hits.Load(), limit)
	}
}

// TestSlotHeldUntilBodyClosed: an open body counts against the host's
// limit, so streaming many large bitstreams stays polite.
func TestSlotHeldUntilBodyClosed(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "body") })
	cfg := testConfig(nil)
	cfg.PerHostConcurrency = 2
	c := newClient(t, cfg, s.URL)
	ctx := context.Background()
	var open []*Response
	for range 2 {
		resp, err := c.Get(ctx, Request{URI: s.URL, Source: "sim"})
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := c.Get(short, Request{URI: s.URL, Source: "sim"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third GET with two bodies open: %v, want to wait for a slot", err)
	}
	open[0].Body.Close()
	resp, err := c.Get(ctx, Request{URI: s.URL, Source: "sim"})
	if err != nil {
		t.Fatalf("GET after a body was closed: %v", err)
	}
	resp.Body.Close()
	open[1].Body.Close()
}
