package notify

import (
	"context"
	"time"
)

// Subscriber is one downstream subscription of the hub, as the operator's
// status shows it.
type Subscriber struct {
	Topic, Callback string
	Expires         time.Time
	// Queued is how many notifications wait for it.
	Queued uint64
}

// Subscribers lists the hub's downstream subscriptions and what waits
// for each; none with an external hub or notifications off.
func (r *Notifications) Subscribers(ctx context.Context) []Subscriber {
	if r == nil || r.hub == nil {
		return nil
	}
	var out []Subscriber
	for _, s := range r.hub.Subscriptions() {
		sub := Subscriber{Topic: s.Topic, Callback: s.Callback, Expires: s.Expires}
		if r.outbox != nil {
			sub.Queued, _ = r.outbox.Len(ctx, s.ID())
		}
		out = append(out, sub)
	}
	return out
}
