package notify

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/websub"
)

// subscriptionFeed starts watches of the shared subscriptions
// (HubSubscriptions.Watch).
type subscriptionFeed interface {
	Watch(ctx context.Context, from uint64) (jetstream.KeyWatcher, error)
}

var _ subscriptionFeed = (*HubSubscriptions)(nil)

// follower keeps a hub in line with the shared subscriptions by applying
// the bucket's watched entries, puts and deletes, in revision order
// (websub.Hub.Follow). Unlike a listing of the bucket, which a replica
// that has not yet applied the latest writes may answer without a
// subscription, a watch can only tell the hub of a change late: the
// hub's view moves forward by revision and nothing but a deletion ends a
// subscription. A watch that ends (its connection closed, its consumer
// lost for good) is started again from the revision after the last one
// applied, after 100 ms doubling to 5 s while starting it fails.
type follower struct {
	hub  *websub.Hub
	feed subscriptionFeed
	log  *slog.Logger
	// unreadable counts the entries passed over because they do not read
	// as a subscription.
	unreadable prometheus.Counter
	// ready is closed once a watch has delivered every subscription the
	// bucket held when it started: the publishing node waits for it.
	ready chan struct{}
	// last is the revision of the last entry applied.
	last uint64
}

func newFollower(hub *websub.Hub, feed subscriptionFeed, log *slog.Logger, unreadable prometheus.Counter) *follower {
	return &follower{hub: hub, feed: feed, log: log, unreadable: unreadable, ready: make(chan struct{})}
}

// run follows the bucket until ctx ends.
func (f *follower) run(ctx context.Context) error {
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		before := f.last
		err := f.watch(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if f.last > before {
			wait = 100 * time.Millisecond
		}
		f.log.Warn("watching the hub's subscriptions; will watch again", "from_revision", f.last+1, "retry_in", wait, "err", err)
		pause(ctx, wait)
		wait = min(2*wait, 5*time.Second)
	}
	return nil
}

// errWatchEnded is a watch whose updates stopped coming.
var errWatchEnded = errors.New("the watch ended")

// watch applies one watch's entries until it ends or ctx does.
func (f *follower) watch(ctx context.Context) error {
	from := uint64(0)
	if f.last > 0 {
		from = f.last + 1
	}
	w, err := f.feed.Watch(ctx, from)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.Updates():
			if !ok {
				return errWatchEnded
			}
			if e == nil {
				f.caughtUp()
				continue
			}
			f.apply(e)
		}
	}
}

func (f *follower) caughtUp() {
	select {
	case <-f.ready:
	default:
		close(f.ready)
	}
}

// apply hands the hub one watched entry. An entry that cannot be read
// (written by something other than a hub) is logged, counted
// (viaduct_notify_subscriptions_unreadable_total) and passed over: the
// hub has no subscription to start from it.
func (f *follower) apply(e jetstream.KeyValueEntry) {
	f.last = max(f.last, e.Revision())
	c := websub.Change{Revision: e.Revision(), ID: strings.TrimPrefix(e.Key(), hubSubPrefix)}
	if e.Operation() == jetstream.KeyValuePut {
		var s websub.Subscription
		if err := json.Unmarshal(e.Value(), &s); err != nil {
			f.log.Error("a hub subscription in the shared store cannot be read; nothing is delivered for it",
				"key", e.Key(), "revision", e.Revision(), "err", err)
			f.unreadable.Inc()
			return
		}
		c.Sub = &s
	}
	f.hub.Follow(c)
}
