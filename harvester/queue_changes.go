package harvester

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// queueChanges queues the changes that next yields (until errEOF) by the
// rules a Change List and a notification share, so that both ways a change
// arrives queue it alike. Every entry is read before any is queued, so
// that entries found out of chronological order are refused whole
// (ErrNonChronological): none is queued and the cursor stays. Changes at
// or after the cursor are kept (equal times included, less those already
// queued at exactly that time), the Policy decides which URIs are wanted,
// and several changes of one URI are coalesced into the last. advance
// moves the cursor to the greatest change time read. what names the kind
// of document ("Change List", "notification") in logs and errors. It
// returns how many changes were queued.
func (p *pass) queueChanges(ctx context.Context, d *document, what string, next func() (*resourcesync.Entry, error), advance bool) (int, error) {
	var (
		batch []*viaduct.Change
		last  = map[string]int{}
		prev  time.Time
		maxT  time.Time
		atMax []string // ids of every change at maxT, coalesced ones included
	)
	for {
		e, err := next()
		if errors.Is(err, errEOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		t := e.ChangeTime()
		if t.IsZero() || e.MD == nil || e.MD.Change == "" {
			p.badEntries++
			p.h.m.errors.WithLabelValues(p.src.Name, kindEntry).Inc()
			p.log.Warn(what+" entry without a change or a time, skipped", "uri", d.uri, "line", e.Line, "loc", e.Loc)
			continue
		}
		if t.Before(prev) {
			p.h.m.errors.WithLabelValues(p.src.Name, kindChronology).Inc()
			return 0, fmt.Errorf("source %s: %s %s line %d: change of %s at %s comes after one at %s: %w",
				p.src.Name, what, d.uri, e.Line, e.Loc, resourcesync.FormatTime(t), resourcesync.FormatTime(prev), ErrNonChronological)
		}
		prev = t
		if t.Before(p.st.changes) || !p.allowed(d, e) {
			continue
		}
		c := p.change(d.uri, e, e.MD.Change, t)
		id := c.MsgID()
		if t.After(maxT) {
			maxT, atMax = t, atMax[:0]
		}
		atMax = append(atMax, id)
		if t.Equal(p.st.changes) && p.st.tie[id] {
			continue // queued by an earlier read
		}
		if i, ok := last[c.URI]; ok {
			batch[i] = nil
		}
		last[c.URI] = len(batch)
		batch = append(batch, c)
	}
	n := 0
	q := p.newBatch()
	for _, c := range batch {
		if c == nil {
			continue
		}
		if err := q.add(ctx, c); err != nil {
			return 0, err
		}
		n++
	}
	// The cursor moves only past changes queued.
	if err := q.flush(ctx); err != nil {
		return 0, err
	}
	if advance && !maxT.IsZero() {
		if err := p.advance(ctx, maxT, atMax); err != nil {
			return n, err
		}
	}
	return n, nil
}
