package websub

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// worker is the delivery loop of one subscription.
type worker struct {
	sub    Subscription // guarded by Hub.mu
	wake   chan struct{}
	cancel context.CancelFunc
}

// poke tells the loop that its queue or its subscription changed.
func (w *worker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// outcome is what a subscriber's answer to a delivery means.
type outcome int

const (
	delivered outcome = iota // 2xx: acknowledge
	failed                   // 5xx, 408, 429, 3xx, network error, timeout: retry later
	refused                  // any other 4xx: the payload will never be taken; drop it
	gone                     // 410: the subscriber unsubscribed
)

// run delivers the subscription's queue in order until the lease ends, the
// subscriber answers 410, or the Hub closes. A failed delivery is retried,
// with backoff, before anything queued after it.
func (h *Hub) run(ctx context.Context, w *worker) {
	first := h.current(w)
	id := first.ID()
	wait := time.Duration(0)
	for ctx.Err() == nil {
		s := h.current(w)
		if !h.clock.Now().Before(s.Expires) {
			h.expire(w)
			return
		}
		if wait > 0 {
			h.sleep(ctx, s, wait, nil)
			if s = h.current(w); !h.clock.Now().Before(s.Expires) {
				continue // the lease ended while waiting
			}
		}
		d, ok, err := h.outbox.Head(ctx, id)
		if err != nil {
			h.log.Error("websub hub: reading the queue", "uri", s.Callback, "topic", s.Topic, "err", err)
			wait = h.backoff(wait)
			continue
		}
		if !ok {
			wait = 0
			h.sleep(ctx, s, 0, w.wake)
			continue
		}
		dctx, cancel := h.deliveryContext(ctx)
		res, err := h.deliver(dctx, s, d)
		var ackErr error
		if res == delivered || res == refused {
			ackErr = h.outbox.Ack(dctx, id, d.Seq)
		}
		cancel()
		switch res {
		case delivered, refused:
			if res == refused {
				h.log.Warn("websub hub: subscriber refused a notification; dropped", "uri", s.Callback, "topic", s.Topic, "err", err)
			}
			if err := ackErr; err != nil {
				h.log.Error("websub hub: acknowledging a delivery", "uri", s.Callback, "topic", s.Topic, "err", err)
				wait = h.backoff(wait)
				continue
			}
			wait = 0
		case gone:
			if err := h.remove(h.ctx, id, "subscriber answered 410 Gone"); err != nil {
				h.log.Error("websub hub: removing a gone subscriber", "uri", s.Callback, "topic", s.Topic, "err", err)
			}
			return
		default:
			wait = h.backoff(wait)
			h.log.Info("websub hub: delivery failed; will retry", "uri", s.Callback, "topic", s.Topic, "retry_in", wait, "err", err)
		}
	}
}

// closeGrace is how long a delivery in flight when the Hub closes has to
// finish.
const closeGrace = 5 * time.Second

// deliveryContext is the context of one delivery and of its
// acknowledgement: bounded by the delivery timeout, and given closeGrace
// to finish once ctx (the Hub's) ends rather than cut short. A subscriber
// that took a payload the Hub then failed to acknowledge would get it
// again from the next Hub, so a clean shutdown lets the exchange end.
func (h *Hub) deliveryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.DeliveryTimeout)
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(closeGrace, cancel) })
	return dctx, func() {
		stop()
		cancel()
	}
}

// backoff is the wait after a failure that followed a wait of prev.
func (h *Hub) backoff(prev time.Duration) time.Duration {
	if prev == 0 {
		return h.cfg.RetryMin
	}
	return min(2*prev, h.cfg.RetryMax)
}

// sleep waits for d (none when 0), wake, the end of s's lease or ctx,
// whichever comes first.
func (h *Hub) sleep(ctx context.Context, s Subscription, d time.Duration, wake <-chan struct{}) {
	lease := h.clock.NewTimer(s.Expires.Sub(h.clock.Now()))
	defer lease.Stop()
	var timeout <-chan time.Time
	if d > 0 {
		t := h.clock.NewTimer(d)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case <-ctx.Done():
	case <-lease.C():
	case <-timeout:
	case <-wake:
	}
}

// expire removes w's subscription if its lease has really ended (a
// renewal may have come in meanwhile).
func (h *Hub) expire(w *worker) {
	h.mu.Lock()
	s := w.sub
	still := h.subs[s.ID()] == w && !h.clock.Now().Before(s.Expires)
	h.mu.Unlock()
	if !still {
		return
	}
	if err := h.remove(h.ctx, s.ID(), "lease ended"); err != nil {
		h.log.Error("websub hub: removing an expired subscription", "uri", s.Callback, "topic", s.Topic, "err", err)
	}
}

// deliver POSTs one notification to the subscriber, within ctx (see
// deliveryContext).
func (h *Hub) deliver(ctx context.Context, s Subscription, d Delivery) (res outcome, err error) {
	ctx, span := h.startDelivery(ctx, s, d)
	defer func() { endDelivery(span, res, err) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Callback, bytes.NewReader(d.Payload))
	if err != nil {
		return refused, fmt.Errorf("delivering to %s: %w", s.Callback, err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", linkHeader(d.Topic, h.cfg.URL))
	if s.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(s.Secret, d.Payload))
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return failed, fmt.Errorf("delivering to %s: %w", s.Callback, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	c := resp.StatusCode
	switch {
	case c/100 == 2:
		return delivered, nil
	case c == http.StatusGone:
		return gone, nil
	case c/100 == 4 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests:
		return refused, fmt.Errorf("delivering to %s: answered %s", s.Callback, resp.Status)
	}
	return failed, fmt.Errorf("delivering to %s: answered %s", s.Callback, resp.Status)
}
