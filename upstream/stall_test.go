package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// trickle writes head at once, then one byte every gap until the request
// ends: a Source that keeps a connection open without really serving.
func trickle(head string, gap time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		t := time.NewTicker(gap)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				if _, err := w.Write([]byte{'x'}); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}
	}
}

// TestTricklingBodyFails: a body that arrives at a byte per 100ms fails
// once a window of 500ms has brought fewer than min_body_rate × window
// bytes, long before request_timeout, with a transient *Error saying so.
func TestTricklingBodyFails(t *testing.T) {
	srv := newServer(t, trickle("<urlset>", 100*time.Millisecond))
	cfg := testConfig(nil)
	cfg.MinBodyRate, cfg.BodyRateWindow = 100, 500*time.Millisecond
	cfg.RequestTimeout = time.Minute
	c := newClient(t, cfg, srv.URL)
	resp, err := c.Get(context.Background(), Request{URI: srv.URL + "/list.xml", Source: "slow"})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer resp.Body.Close()
	start := time.Now()
	n, err := io.Copy(io.Discard, resp.Body)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("read %d bytes of a trickling body without error", n)
	}
	var ue *Error
	if !errors.As(err, &ue) || !IsTransient(err) || ue.Op != "read" || !strings.Contains(err.Error(), "min_body_rate") {
		t.Fatalf("error %v: want a transient read *Error naming min_body_rate", err)
	}
	if !strings.Contains(err.Error(), `"slow"`) {
		t.Errorf("error %v does not name the Source", err)
	}
	// The bound is far above the window, for a loaded machine, and far
	// below the request timeout the body would otherwise hold a slot for.
	if took > 20*time.Second {
		t.Errorf("the stall was noticed after %s; want about one window (500ms)", took)
	}
}

// TestSlowReaderIsNotAStall: a consumer that pauses longer than a window
// between reads of a body the Source sent at once is not failed: only the
// time spent waiting for the Source counts.
func TestSlowReaderIsNotAStall(t *testing.T) {
	body := strings.Repeat("y", 64<<10)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	cfg := testConfig(nil)
	cfg.MinBodyRate, cfg.BodyRateWindow = 1<<20, 200*time.Millisecond
	c := newClient(t, cfg, srv.URL)
	resp, err := c.Get(context.Background(), Request{URI: srv.URL + "/bitstream", Source: "s"})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4<<10)
	var got int
	for i := 0; ; i++ {
		n, err := resp.Body.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read after %d bytes: %v", got, err)
		}
		if i < 2 {
			// The consumer's own pause (the scenario, not a wait for a
			// condition): three windows long.
			<-time.After(600 * time.Millisecond)
		}
	}
	if got != len(body) {
		t.Fatalf("read %d bytes, want %d", got, len(body))
	}
}

// TestHostWaitBusy: with every slot of a host taken, a request with a
// HostWait fails with ErrBusy after about that long, sending nothing; one
// without waits for the slot.
func TestHostWaitBusy(t *testing.T) {
	srv, release := heldServer(t)
	cfg := testConfig(nil)
	cfg.PerHostConcurrency = 1
	c := newClient(t, cfg, srv.URL)
	held := holdSlot(c, srv.URL)
	host, err := ParseAuthority(srv.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the held request to take the slot", func() bool { return c.Saturated(host) })
	_, err = c.Get(context.Background(), Request{URI: srv.URL + "/other", Source: "s", HostWait: 50 * time.Millisecond})
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Get with HostWait on a saturated host: %v, want ErrBusy", err)
	}
	if hits := srv.hits.Load(); hits != 1 {
		t.Errorf("the server saw %d requests, want 1 (the busy one sends nothing)", hits)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the held request: %v", err)
	}
	resp, err := c.Get(context.Background(), Request{URI: srv.URL + "/other", Source: "s", HostWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatalf("Get once the slot is free: %v", err)
	}
	resp.Body.Close()
}

// TestRateWait: a host with a free slot and a token waits for nothing; a
// request holding its only slot is reported as slots taken; once it is
// done, having taken the host's only token, the wait is about one period
// of per_host_rate, never more. The period is ten seconds, so that no
// pause of a busy machine between the request and the question lets the
// token come back first.
func TestRateWait(t *testing.T) {
	srv, release := heldServer(t)
	cfg := testConfig(nil)
	cfg.PerHostConcurrency = 1
	cfg.PerHostRate, cfg.PerHostBurst = 0.1, 1
	c := newClient(t, cfg, srv.URL)
	host, err := ParseAuthority(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	if w, taken := c.RateWait(host); w != 0 || taken {
		t.Fatalf("a host never asked: wait %s, slots taken %v; want 0, false", w, taken)
	}
	held := holdSlot(c, srv.URL)
	eventually(t, "the held request to take the slot", func() bool { _, taken := c.RateWait(host); return taken })
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the held request: %v", err)
	}
	if w, taken := c.RateWait(host); w <= 0 || w > 10*time.Second || taken {
		t.Fatalf("after a request took its only token at one every 10 s: wait %s, slots taken %v; want (0, 10s], false", w, taken)
	}
}

// heldServer answers "ok" at once but at /held, which it answers once
// release is closed.
func heldServer(t *testing.T) (*server, chan struct{}) {
	release := make(chan struct{})
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/held" {
			<-release
		}
		io.WriteString(w, "ok")
	}), release
}

// holdSlot sends a request to base's /held, which holds a slot of the
// host until the server releases it; its error comes on the channel.
func holdSlot(c *Client, base string) <-chan error {
	held := make(chan error, 1)
	go func() {
		resp, err := c.Get(context.Background(), Request{URI: base + "/held", Source: "s"})
		if err == nil {
			resp.Body.Close()
		}
		held <- err
	}()
	return held
}
