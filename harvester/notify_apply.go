package harvester

import (
	"context"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// apply handles one notification of s on topic; s.mu is held.
//
// Its entries are queued when its interval follows what was seen
// (first, consecutive) or leaves a gap before it: they are the newest
// changes known. Those of an overlapping or out-of-order notification
// are not: they may be older than changes already queued, and the
// catch-up reads them from the Change List in their place. The change
// cursor moves only for a consecutive notification while every interval
// before it is covered; otherwise the catch-up pass, reading the Change
// List from the cursor, queues whatever a missing notification held.
func (p *Push) apply(ctx context.Context, s *source, topic string, hd *resourcesync.Header, entries []*resourcesync.Entry) error {
	ps := p.h.newPass(s)
	if err := ps.loadState(ctx); err != nil {
		return err
	}
	from, until := hd.MD.From, hd.MD.Until
	p.mu.Lock()
	ch := p.chans[s.Name]
	p.mu.Unlock()
	if ch == nil || ch.Topic != topic {
		return errNoSource
	}
	prev := p.tr.Until(topic)
	v := p.tr.Observe(topic, from, until)
	c := catchUp{topic: topic, reason: v.Relation.String()}
	f, u := resourcesync.FormatTime(from), resourcesync.FormatTime(until)
	switch v.Relation {
	case websub.First:
		p.ask(s.Name, c, "first notification on topic "+topic+": polling Change List for what came before it", "from", f, "until", u)
	case websub.Gap:
		p.ask(s.Name, c, "notification gap from "+resourcesync.FormatTime(prev)+" to "+f+" on topic "+topic+": polling Change List", "from", f, "until", u)
	case websub.Overlap:
		p.ask(s.Name, c, "notification overlaps the one before (from "+f+" before "+resourcesync.FormatTime(prev)+") on topic "+topic+": polling Change List", "from", f, "until", u)
	case websub.OutOfOrder:
		p.ask(s.Name, c, "notification out of order ("+f+" to "+u+" after one until "+resourcesync.FormatTime(prev)+") on topic "+topic+": polling Change List", "from", f, "until", u)
	}
	advance := false
	p.mu.Lock()
	if v.Relation != websub.Consecutive {
		ch.covered = false
	}
	advance = ch.covered
	p.mu.Unlock()
	if v.Relation == websub.Overlap || v.Relation == websub.OutOfOrder {
		return nil
	}
	err := ps.pushed(ctx, topic, from, entries, advance)
	if err != nil {
		return err
	}
	if advance {
		return ps.set(ctx, curNotified, until.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// pushed queues a notification's entries by the rules of a Change List
// (queueChanges): the same Change, the same Policy check, the same
// cursor, tie and coalescing rules. advance moves the cursor to the last
// change time. Entries out of chronological order are a notification the
// Source got wrong: none is queued and a catch-up is asked for. Entries
// without a time are placed after the change before them, the first ones
// at the notification's from: never later, so that the cursor never moves
// past a change the notification did not date.
func (ps *pass) pushed(ctx context.Context, topic string, from time.Time, entries []*resourcesync.Entry, advance bool) error {
	d := &document{uri: topic}
	defer ps.logRefusals()
	i := 0
	next := func() (*resourcesync.Entry, error) {
		if i == len(entries) {
			return nil, errEOF
		}
		i++
		return entries[i-1], nil
	}
	n, err := ps.queueChanges(ctx, d, "notification", from, next, advance)
	if err != nil {
		return err
	}
	ps.log.Debug("notification queued", "uri", topic, "queued", n, "advanced", advance, "cursor", ps.st.changes)
	return nil
}
