package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/websub"
)

// Notifier turns the aggregator's change log into change notifications,
// one topic per collection. It follows the catalog rather than EVENTS:
// the catalog holds the change times the Change Lists state (the stream's
// timestamps made strictly increasing) and the provenance of each change,
// so a notification's entries are exactly the Change Lists' entries.
//
// Every window it looks for changes after each collection's cursor (the
// until of its last notification) and publishes them in payloads of at
// most MaxEntries, each covering (previous until, time of its last
// change]: consecutive, non-overlapping intervals, and every change in
// exactly one. The cursor is kept in the catalog. Before a payload is
// published its interval is recorded as pending, so that after a crash
// the same payload (same interval, same bytes) is published again rather
// than a different one overlapping it; viaduct's hub stores a repeated
// payload once.
type Notifier struct {
	s     *republish.Server
	cfg   republish.NotifyConfig
	state KV
	pub   websub.Publisher
	log   *slog.Logger
	now   func() time.Time

	// Subscribed, when set, tells whether a topic has a subscriber: a
	// collection whose topic has none gets no payload built, its cursor
	// moving on to its last change (what happened before a subscription
	// is not owed to it). It is set before Run, for viaduct's own hub; an
	// external hub's subscribers are not known, so it gets every payload.
	Subscribed func(topic string) bool
}

// NewNotifier returns the Notifier of s's collections, publishing with
// pub and keeping its cursors in state.
func NewNotifier(s *republish.Server, state KV, pub websub.Publisher, logger *slog.Logger) (*Notifier, error) {
	cfg := s.NotifyConfig()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	if state == nil || pub == nil {
		return nil, errors.New("notify: the notifier needs a state store and a publisher")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{s: s, cfg: cfg, state: state, pub: pub, log: logger, now: time.Now}
	// A collection added while the node runs is switched on as it is
	// added, before any of its changes: its subscribers are told of them
	// all, however soon they come.
	s.WhenAdded(func(ctx context.Context, c string) error {
		_, err := n.load(ctx, c)
		return err
	})
	return n, nil
}

// cursor is a collection's position, stored as JSON under cursorKey.
type cursor struct {
	// Until is the until of the last notification published; zero before
	// the first one.
	Until time.Time `json:"until"`
	// Pending is the until of a notification being published; zero when
	// none is.
	Pending time.Time `json:"pending,omitzero"`
}

func cursorKey(c string) string { return "republish/notify/" + c }

// Run publishes notifications every window until ctx ends. A failure
// (a catalog read, a publication) is logged and retried with backoff up
// to a minute; the cursor does not move past what was not published.
func (n *Notifier) Run(ctx context.Context) error { return n.RunWoken(ctx, nil) }

// RunWoken is Run that also publishes as soon as wake is signalled (the
// catalog applied a batch), instead of at the end of the window: a change
// then reaches subscribers within milliseconds of reaching the catalog,
// and the applier's batching is the gathering. While a failure is being
// retried, wake is ignored until the backoff ends.
func (n *Notifier) RunWoken(ctx context.Context, wake <-chan struct{}) error {
	wait := n.cfg.Window
	t := time.NewTimer(0)
	defer t.Stop()
	woken := wake
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-woken:
			t.Stop()
		}
		if err := n.Flush(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			wait = min(2*wait, time.Minute)
			woken = nil
			n.log.Warn("notifier: publishing change notifications failed; will retry", "retry_in", wait, "err", err)
		} else {
			wait, woken = n.cfg.Window, wake
		}
		t.Reset(wait)
	}
}

// Flush publishes, for every collection, what changed since its last
// notification.
func (n *Notifier) Flush(ctx context.Context) error {
	var errs []error
	for _, c := range n.s.CollectionNames() {
		if err := n.flush(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (n *Notifier) flush(ctx context.Context, c string) error {
	cur, err := n.load(ctx, c)
	if err != nil {
		return err
	}
	if cur.Pending.IsZero() && n.Subscribed != nil && !n.Subscribed(n.s.TopicURL(c)) {
		return n.skip(ctx, c, cur)
	}
	for {
		until := cur.Pending
		if until.IsZero() {
			var ok bool
			if until, ok, err = nextUntil(ctx, n.s, c, cur.Until, n.cfg.MaxEntries); err != nil || !ok {
				return err
			}
			cur.Pending = until
			if err := n.save(ctx, c, cur); err != nil {
				return err
			}
		}
		note, err := buildNotification(ctx, n.s, c, cur.Until, until)
		if err != nil {
			return err
		}
		topic := n.s.TopicURL(c)
		// Once a payload is handed to the hub, its cursor must be saved
		// too, or a restart would publish the interval again after the hub
		// has delivered and forgotten it: neither step is cut short by a
		// shutdown, only bounded in time.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err = n.pub.Publish(wctx, topic, note.payload)
		if err != nil {
			cancel()
			return fmt.Errorf("collection %s: publishing the notification of (%s, %s]: %w", c, note.from.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano), err)
		}
		n.log.Debug("notifier: published", "collection", c, "from", note.from, "until", until, "entries", note.entries, "bytes", len(note.payload))
		n.s.CountNotified(note.entries)
		cur = cursor{Until: until}
		err = n.save(wctx, c, cur)
		cancel()
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// skip moves the cursor of collection c, whose topic has no subscriber,
// to its last change without publishing anything.
func (n *Notifier) skip(ctx context.Context, c string, cur cursor) error {
	last, err := n.s.LastChange(ctx, c)
	if err != nil {
		return fmt.Errorf("collection %s: stats: %w", c, err)
	}
	if !last.After(cur.Until) {
		return nil
	}
	return n.save(ctx, c, cursor{Until: last})
}

// load reads collection c's cursor. A collection without one starts at
// its last change: notifications are about what happens from when they
// are switched on, and the Change Lists hold the history before.
func (n *Notifier) load(ctx context.Context, c string) (cursor, error) {
	var cur cursor
	b, err := n.state.Value(ctx, cursorKey(c))
	switch {
	case errors.Is(err, catalog.ErrNotFound), errors.Is(err, republish.ErrNotFound):
		last, err := n.s.LastChange(ctx, c)
		if err != nil {
			return cur, fmt.Errorf("collection %s: stats: %w", c, err)
		}
		cur.Until = last
		if err := n.save(ctx, c, cur); err != nil {
			return cur, err
		}
		n.log.Info("notifier: starting", "collection", c, "after", cur.Until)
		return cur, nil
	case err != nil:
		return cur, fmt.Errorf("collection %s: reading the notification cursor: %w", c, err)
	}
	if err := json.Unmarshal(b, &cur); err != nil {
		return cur, fmt.Errorf("collection %s: decoding the notification cursor %q: %w", c, b, err)
	}
	return cur, nil
}

func (n *Notifier) save(ctx context.Context, c string, cur cursor) error {
	b, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	if err := n.state.SetValue(ctx, cursorKey(c), b); err != nil {
		return fmt.Errorf("collection %s: storing the notification cursor: %w", c, err)
	}
	return nil
}
