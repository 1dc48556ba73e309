package websub

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
)

// NewCallbackID and NewSecret make a fresh callback ID and secret for
// SubscribeAs, as Subscribe does.
func NewCallbackID() string { return strings.ToLower(rand.Text()) }
func NewSecret() string     { return rand.Text() + rand.Text() }

// SubscribeAs is Subscribe with the callback ID and secret chosen by the
// caller, who keeps them across restarts: a process that subscribes again
// under the same callback renews the hub's subscription instead of adding
// one, and the deliveries the hub queued meanwhile still verify. A request
// the hub refuses is an error and leaves nothing behind.
func (s *Subscriber) SubscribeAs(ctx context.Context, hub, topic, id, secret string) (Sub, error) {
	if err := checkHub(hub); err != nil {
		return Sub{}, fmt.Errorf("subscribing to %s: %w", topic, err)
	}
	if id == "" || strings.ContainsAny(id, "/?#") || secret == "" || len(secret) >= MaxSecretLen {
		return Sub{}, fmt.Errorf("subscribing to %s: callback ID %q or secret unusable", topic, id)
	}
	e := &subEntry{Sub: Sub{ID: id, Hub: hub, Topic: topic, Callback: s.cfg.CallbackBase + id, State: Pending},
		secret: secret, retry: s.cfg.RetryMin}
	e.renewAt = s.clock.Now().Add(e.retry)
	s.mu.Lock()
	if old, ok := s.subs[id]; ok && old.State == Active && old.Hub == hub && old.Topic == topic {
		e.Sub = old.Sub // a renewal: the lease granted stands until verified again
	}
	s.subs[id] = e
	s.mu.Unlock()
	if err := s.request(ctx, e, "subscribe"); err != nil {
		s.mu.Lock()
		delete(s.subs, id)
		s.mu.Unlock()
		return Sub{}, err
	}
	s.wake()
	return s.get(id)
}

// UnsubscribeAs ends a subscription this Subscriber does not hold (one
// made before a restart, under callback ID id): it is taken on as
// Unsubscribing, so that the hub's verification is answered, and the
// unsubscribe request is sent.
func (s *Subscriber) UnsubscribeAs(ctx context.Context, hub, topic, id string) error {
	if err := checkHub(hub); err != nil {
		return fmt.Errorf("unsubscribing from %s: %w", topic, err)
	}
	s.mu.Lock()
	if _, ok := s.subs[id]; !ok {
		s.subs[id] = &subEntry{Sub: Sub{ID: id, Hub: hub, Topic: topic, Callback: s.cfg.CallbackBase + id, State: Unsubscribing}}
	}
	s.mu.Unlock()
	return s.Unsubscribe(ctx, id)
}

// checkHub refuses a hub URL that is not absolute http(s).
func checkHub(hub string) error {
	if _, ok := httpURL(hub); !ok {
		return fmt.Errorf("hub %q is not an absolute http(s) URL", hub)
	}
	return nil
}

// httpURL parses s and reports whether it is an absolute http(s) URL.
func httpURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	return u, err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
