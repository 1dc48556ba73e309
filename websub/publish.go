package websub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Publisher sends one change notification payload on a topic: the Hub
// inside viaduct, or an ExternalHub.
type Publisher interface {
	Publish(ctx context.Context, topic string, payload []byte) error
}

// Publish queues payload for every subscriber of topic whose lease has not
// ended, and wakes their delivery loops; it returns once the payload is in
// every queue, not once it is delivered. On an error some queues may hold
// it already, so a retried Publish can deliver it twice to those; a
// subscriber sees that as an overlap, which its gap check handles.
func (h *Hub) Publish(ctx context.Context, topic string, payload []byte) error {
	if !h.hasTopic(topic) {
		return fmt.Errorf("websub hub: publishing on %s: %w", topic, ErrUnknownTopic)
	}
	h.change.Lock()
	defer h.change.Unlock()
	now := h.clock.Now()
	h.mu.Lock()
	var ws []*worker
	for _, w := range h.subs {
		if w.sub.Topic == topic && now.Before(w.sub.Expires) {
			ws = append(ws, w)
		}
	}
	h.mu.Unlock()
	var errs []error
	links := linksFrom(ctx)
	for _, w := range ws {
		if err := h.outbox.Append(ctx, w.sub.ID(), Delivery{Topic: topic, Payload: payload, Links: links}); err != nil {
			errs = append(errs, fmt.Errorf("websub hub: queueing a notification on %s for %s: %w", topic, w.sub.Callback, err))
			continue
		}
		w.poke()
	}
	return errors.Join(errs...)
}

// ExternalHub publishes to a hub viaduct does not run, as the spec's
// Example 2 does: a POST of the payload to the hub with the topic (self)
// and hub links.
type ExternalHub struct {
	// URL is the hub's URL.
	URL string
	// Client defaults to one that never follows redirects.
	Client *http.Client
	// Timeout bounds one publication; default 30 s.
	Timeout time.Duration
}

var _ Publisher = (*ExternalHub)(nil)

// Publish POSTs payload to the hub for topic and wants a 2xx answer (the
// spec asks hubs for 200).
func (e *ExternalHub) Publish(ctx context.Context, topic string, payload []byte) error {
	c := e.Client
	if c == nil {
		c = noRedirectClient()
	}
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("publishing on %s to hub %s: %w", topic, e.URL, err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", linkHeader(topic, e.URL))
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("publishing on %s to hub %s: %w", topic, e.URL, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("publishing on %s to hub %s: answered %s", topic, e.URL, resp.Status)
	}
	return nil
}

// EncodeNotification writes a change notification payload: a urlset with
// capability change-notification, from and until, an optional rel="up"
// link to the Capability List, and the entries, which must be in forward
// chronological order.
func EncodeNotification(from, until time.Time, up string, entries []*resourcesync.Entry) ([]byte, error) {
	hd := &resourcesync.Header{Root: resourcesync.URLSet,
		MD: resourcesync.MD{Capability: resourcesync.CapChangeNotification, From: from, Until: until}}
	if up != "" {
		hd.Links = []resourcesync.Link{{Rel: "up", Href: up}}
	}
	var buf bytes.Buffer
	w, err := resourcesync.NewWriter(&buf, hd)
	if err != nil {
		return nil, fmt.Errorf("writing a change notification: %w", err)
	}
	for _, e := range entries {
		if err := w.Write(e); err != nil {
			return nil, fmt.Errorf("writing a change notification: entry %s: %w", e.Loc, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("writing a change notification: %w", err)
	}
	return buf.Bytes(), nil
}
