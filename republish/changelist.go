package republish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Change Lists cover fixed periods of the aggregator's change log, aligned
// on multiples of ChangeListPeriod since the Unix epoch: the list of period
// [t, t+p) is at <collection>/changelist/<t as 20060102T150405Z>.xml and
// holds the changes with t <= change time < t+p. Consecutive lists thus
// cover consecutive, non-overlapping intervals. A period is closed (its
// list has until) once the catalog holds a change of the collection at or
// after its end: changes are applied in order, so none can still come for
// it. The period holding the collection's last change is the open list,
// with from only, until a later change closes it. The Change List Index
// lists every period from the collection's first change to the open one,
// the most recent MaxChangeLists of them.

const periodLayout = "20060102T150405Z"

// periodStart returns the start of the period holding t.
func (s *Server) periodStart(t time.Time) time.Time {
	p := s.cfg.ChangeListPeriod.Nanoseconds()
	n := t.UnixNano()
	q := n / p
	if n%p < 0 {
		q--
	}
	return time.Unix(0, q*p).UTC()
}

// changeListURL is the URL of the piece from from of the period starting
// at start (the whole period's when from is start).
func (s *Server) changeListURL(coll string, start, from time.Time) string {
	return s.url("/" + coll + "/changelist/" + pieceName(start, from) + ".xml")
}

// periods returns the starts of the periods the index lists, oldest first,
// and the start of the open one.
func (s *Server) periods(st Stats) (starts []time.Time, open time.Time) {
	open = s.periodStart(s.headTime(st))
	first := open
	if !st.First.IsZero() {
		first = s.periodStart(st.First)
	}
	p := s.cfg.ChangeListPeriod
	if n := int64(open.Sub(first)/p) + 1; n > int64(s.cfg.MaxChangeLists) {
		first = open.Add(-time.Duration(s.cfg.MaxChangeLists-1) * p)
	}
	for t := first; !t.After(open); t = t.Add(p) {
		starts = append(starts, t)
	}
	return starts, open
}

func (s *Server) serveChangeListIndex(w http.ResponseWriter, r *http.Request, c *Collection) {
	ctx := r.Context()
	st, err := s.cat.Stats(ctx, c.Name)
	if err != nil {
		s.fail(w, r, "changelist-index", fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	starts, open := s.periods(st)
	lists, err := s.changeLists(ctx, c.Name, st, starts, open)
	if err != nil {
		s.fail(w, r, "changelist-index", fmt.Errorf("collection %s: split change lists: %w", c.Name, err))
		return
	}
	h := &resourcesync.Header{
		Root:  resourcesync.SitemapIndex,
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeList, From: lists[0].from},
		Links: []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(c.Name)}},
	}
	etag := etagOf("changelist-index", c.Name, st.Changes, st.Last.UnixNano(), open.UnixNano(), starts[0].UnixNano(), s.confID())
	s.send(w, r, reply{doc: "changelist-index", contentType: xmlType, etag: etag, modified: st.Last,
		write: func(out io.Writer) (int, error) {
			wr, err := resourcesync.NewWriter(out, h)
			if err != nil {
				return 0, err
			}
			for i, l := range lists {
				md := &resourcesync.MD{From: l.from, Until: l.until}
				if err := wr.Write(&resourcesync.Entry{Loc: s.changeListURL(c.Name, l.start, l.from), MD: md}); err != nil {
					return i, err
				}
			}
			return len(lists), wr.Close()
		}})
}

// listed is one Change List the index lists: a piece of a period.
type listed struct {
	start, from, until time.Time // until zero: the open list
}

// changeLists returns the Change Lists of the periods starting at starts,
// split into pieces, the most recent MaxChangeLists of them.
func (s *Server) changeLists(ctx context.Context, coll string, st Stats, starts []time.Time, open time.Time) ([]listed, error) {
	p := s.cfg.ChangeListPeriod
	var out []listed
	for _, t := range starts {
		closed := t.Before(open)
		ps, err := s.pieces(ctx, coll, t, st, closed)
		if err != nil {
			return nil, err
		}
		for i, from := range ps {
			l := listed{start: t, from: from}
			switch {
			case i+1 < len(ps):
				l.until = ps[i+1]
			case closed:
				l.until = t.Add(p)
			}
			out = append(out, l)
		}
	}
	if n := len(out) - s.cfg.MaxChangeLists; n > 0 {
		out = out[n:]
	}
	return out, nil
}

// serveChangeList serves the Change List named by name: a period's, or
// one piece of it (see changesplit.go).
func (s *Server) serveChangeList(w http.ResponseWriter, r *http.Request, c *Collection, name string) {
	if name == currentName {
		s.serveCurrentChangeList(w, r, c)
		return
	}
	stamp, ok := strings.CutSuffix(name, ".xml")
	start, from, okName := parsePieceName(stamp)
	if !ok || !okName || !s.periodStart(start).Equal(start) {
		s.fail(w, r, "changelist", fault(notFound, nil))
		return
	}
	ctx := r.Context()
	st, err := s.cat.Stats(ctx, c.Name)
	if err != nil {
		s.fail(w, r, "changelist", fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	_, open := s.periods(st)
	if start.After(open) {
		s.fail(w, r, "changelist", fault(notFound, nil))
		return
	}
	closed := start.Before(open)
	ps, err := s.pieces(ctx, c.Name, start, st, closed)
	if err != nil {
		s.fail(w, r, "changelist", fmt.Errorf("collection %s: split change list %s: %w", c.Name, stamp, err))
		return
	}
	i := slices.IndexFunc(ps, func(t time.Time) bool { return t.Equal(from) })
	if i < 0 {
		s.fail(w, r, "changelist", fault(notFound, nil))
		return
	}
	if from.Before(st.Horizon) { // retention removed its changes (docs/gc.md)
		s.fail(w, r, "changelist", fault(gone, nil))
		return
	}
	md := resourcesync.MD{Capability: resourcesync.CapChangeList, From: from}
	var until time.Time // zero: the open list reads to the end of the log
	rp := reply{doc: "changelist", contentType: xmlType, modified: st.Last}
	switch {
	case i+1 < len(ps):
		md.Until = ps[i+1]
	case closed:
		md.Until = start.Add(s.cfg.ChangeListPeriod)
	}
	if !md.Until.IsZero() {
		until = md.Until
		rp.closed = true
		rp.modified = md.Until
	}
	rp.etag = etagOf("changelist", c.Name, from.UnixNano(), until.UnixNano(), st.Changes, st.Last.UnixNano(), s.confID())
	h := &resourcesync.Header{MD: md, Links: []resourcesync.Link{
		{Rel: "up", Href: s.capabilityListURL(c.Name)},
		{Rel: "index", Href: s.changeListIndexURL(c.Name)},
	}}
	rp.write = func(out io.Writer) (int, error) {
		wr, err := resourcesync.NewWriter(out, h)
		if err != nil {
			return 0, err
		}
		b := s.newEntryBuilder(c.Name)
		b.bareLoc = true
		var prev time.Time
		n := 0
		err = s.cat.Changes(ctx, c.Name, from, until, func(rec *Record) error {
			if !rec.At.After(prev) {
				s.log.WarnContext(ctx, "republish: change times not strictly increasing", "collection", c.Name, "uri", rec.URI, "seq", rec.Seq)
			}
			prev = rec.At
			if _, err := b.change(ctx, rec); err != nil {
				return err
			}
			n++
			return b.write(wr)
		})
		if err != nil && !errors.Is(err, errStop) {
			return n, fmt.Errorf("collection %s: change list %s: %w", c.Name, stamp, err)
		}
		return n, wr.Close()
	}
	s.send(w, r, rp)
}
