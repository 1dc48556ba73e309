package harvester

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// newPass is a pass over s, for the work a notification does between
// passes.
func (h *Harvester) newPass(s *source) *pass {
	return &pass{h: h, src: s, client: s.client, policy: s.policy, log: h.log.With("source", s.Name, "collection", s.Collection)}
}

// kept reads the subscription kept for a Source, if any.
func (p *Push) kept(ctx context.Context, name string) (subRecord, error) {
	var rec subRecord
	v, err := p.h.deps.Cursors.Cursor(ctx, name, curSubscription)
	if err != nil || v == "" {
		return rec, err
	}
	if err := json.Unmarshal([]byte(v), &rec); err != nil {
		return subRecord{}, fmt.Errorf("source %s: cursor %s: %w", name, curSubscription, err)
	}
	return rec, nil
}

func (p *Push) keep(ctx context.Context, name string, rec subRecord) error {
	v := ""
	if rec.ID != "" {
		b, _ := json.Marshal(rec)
		v = string(b)
	}
	if err := p.h.deps.Cursors.SetCursor(ctx, name, curSubscription, v); err != nil {
		return fmt.Errorf("source %s: set cursor %s: %w", name, curSubscription, err)
	}
	return nil
}

// restore renews at start-up the subscription kept for s, or ends it when
// s is no longer to be notified. The Tracker starts from the until last
// known to be covered.
func (p *Push) restore(ctx context.Context, s *source) error {
	rec, err := p.kept(ctx, s.Name)
	if err != nil || rec.ID == "" {
		return err
	}
	if !p.cfg.notifies(s) {
		return p.unsubscribeKept(ctx, s.Name)
	}
	ch := &channel{subRecord: rec}
	if v, _ := p.h.deps.Cursors.Cursor(ctx, s.Name, curNotified); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			p.tr.Seed(rec.Topic, t)
			ch.covered = true
		}
	}
	p.mu.Lock()
	p.chans[s.Name], p.byID[rec.ID] = ch, s.Name
	p.mu.Unlock()
	_, err = p.sub.SubscribeAs(ctx, rec.Hub, rec.Topic, rec.ID, rec.Secret)
	return err
}

// unsubscribeKept ends the subscription kept for the named Source and
// forgets it.
func (p *Push) unsubscribeKept(ctx context.Context, name string) error {
	rec, err := p.kept(ctx, name)
	if err != nil || rec.ID == "" {
		return err
	}
	p.mu.Lock()
	delete(p.chans, name)
	delete(p.byID, rec.ID)
	p.mu.Unlock()
	p.tr.Forget(rec.Topic)
	err = p.sub.UnsubscribeAs(ctx, rec.Hub, rec.Topic, rec.ID)
	if kerr := p.keep(ctx, name, subRecord{}); err == nil {
		err = kerr
	}
	p.log.Info("unsubscribed from change notifications", "source", name, "topic", rec.Topic, "hub", rec.Hub)
	return err
}

// noteChannel records the change notification channel a Capability List
// entry offers: its topic and the hub named by its rel="hub" link.
func (ps *pass) noteChannel(capList string, e *resourcesync.Entry) {
	if ps.chanTopic != "" {
		return
	}
	for _, l := range e.Links {
		if l.Rel == "hub" && l.Href != "" {
			ps.chanTopic, ps.chanHub = resolve(capList, e.Loc), resolve(capList, l.Href)
			return
		}
	}
	ps.log.Warn("change-notification capability without a hub link, ignored", "uri", capList, "loc", e.Loc)
}

// channel subscribes to the channel the pass found, or ends a
// subscription whose channel is gone or no longer wanted. A failure is
// logged: polling carries on, and the next pass tries again.
func (ps *pass) channel(ctx context.Context) {
	p := ps.h.pushing()
	if p == nil {
		return
	}
	topic, hub := ps.chanTopic, ps.chanHub
	if topic != "" {
		for _, u := range []string{topic, hub} {
			if err := ps.policy.Allow(u); err != nil {
				ps.log.Warn("change notification channel outside what the Source may point at, not subscribed", "uri", u, "err", err)
				topic = ""
			}
		}
	}
	if !p.cfg.notifies(ps.src) {
		topic = ""
	}
	p.mu.Lock()
	ch := p.chans[ps.src.Name]
	p.mu.Unlock()
	if ch != nil && ch.Topic == topic && ch.Hub == hub {
		if _, ok := p.sub.Get(ch.ID); ok {
			return
		}
	}
	if ch != nil && (ch.Topic != topic || ch.Hub != hub) {
		if err := p.unsubscribeKept(ctx, ps.src.Name); err != nil {
			ps.log.Warn("ending a subscription", "topic", ch.Topic, "err", err)
		}
		ch = nil
	}
	if topic == "" {
		return
	}
	if ch == nil {
		ch = &channel{subRecord: subRecord{Hub: hub, Topic: topic, ID: websub.NewCallbackID(), Secret: websub.NewSecret()}}
	}
	if _, err := p.sub.SubscribeAs(ctx, hub, topic, ch.ID, ch.Secret); err != nil {
		ps.log.Warn("subscribing to change notifications failed; polling on, the next pass tries again", "topic", topic, "hub", hub, "err", err)
		return
	}
	if err := p.keep(ctx, ps.src.Name, ch.subRecord); err != nil {
		ps.log.Warn("keeping the subscription", "topic", topic, "err", err)
	}
	p.tr.Seed(topic, time.Time{})
	p.mu.Lock()
	p.chans[ps.src.Name], p.byID[ch.ID] = ch, ps.src.Name
	p.mu.Unlock()
	ps.log.Info("subscribed to change notifications", "topic", topic, "hub", hub)
}

// passed runs at the end of every pass that ended well: everything up to
// the Source's present has been queued, so the Tracker's until is
// covered, and is kept as the point a restart resumes from.
func (ps *pass) passed(ctx context.Context) {
	p := ps.h.pushing()
	if p == nil {
		return
	}
	p.mu.Lock()
	ch := p.chans[ps.src.Name]
	if ch != nil {
		ch.covered, ch.lastPass = true, time.Now()
	}
	p.mu.Unlock()
	if ch == nil {
		return
	}
	if u := p.tr.Until(ch.Topic); !u.IsZero() {
		if err := ps.set(ctx, curNotified, u.UTC().Format(time.RFC3339Nano)); err != nil {
			ps.log.Warn("keeping the notified until", "err", err)
		}
	}
}

// skipPoll reports whether a scheduled poll of s may be skipped: its
// subscription is active, its notifications have covered everything so
// far, and the push schedule has not come round since the last pass.
func (h *Harvester) skipPoll(s *source) bool {
	p := h.pushing()
	if p == nil {
		return false
	}
	p.mu.Lock()
	ch := p.chans[s.Name]
	var ok bool
	var last time.Time
	if ch != nil {
		ok, last = ch.covered, ch.lastPass
	}
	p.mu.Unlock()
	if !ok || last.IsZero() {
		return false
	}
	if sub, found := p.sub.Get(ch.ID); !found || sub.State != websub.Active {
		return false
	}
	sched, err := cronParser.Parse(p.cfg.PushSchedule)
	if err != nil {
		return false
	}
	return sched.Next(last).After(time.Now())
}

// pushing is the running Push, or nil.
func (h *Harvester) pushing() *Push {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.push
}

// following reports whether the Source's subscription is active and when
// its last notification was taken (zero: none since the process started).
func (p *Push) following(name string) (active bool, heard time.Time) {
	p.mu.Lock()
	ch, heard := p.chans[name], p.heard[name]
	p.mu.Unlock()
	if ch == nil || ch.ID == "" {
		return false, heard
	}
	sub, found := p.sub.Get(ch.ID)
	return found && sub.State == websub.Active, heard
}
