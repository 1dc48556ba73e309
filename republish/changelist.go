package republish

import (
	"errors"
	"fmt"
	"io"
	"net/http"
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

func (s *Server) changeListURL(coll string, start time.Time) string {
	return s.url("/" + coll + "/changelist/" + start.UTC().Format(periodLayout) + ".xml")
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
	st, err := s.cat.Stats(r.Context(), c.Name)
	if err != nil {
		s.fail(w, r, "changelist-index", http.StatusInternalServerError, fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	starts, open := s.periods(st)
	p := s.cfg.ChangeListPeriod
	h := &resourcesync.Header{
		Root:  resourcesync.SitemapIndex,
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeList, From: starts[0]},
		Links: []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(c.Name)}},
	}
	etag := etagOf("changelist-index", c.Name, st.Changes, open.UnixNano(), starts[0].UnixNano(), s.confID)
	s.send(w, r, reply{doc: "changelist-index", contentType: xmlType, etag: etag, modified: st.Last,
		write: func(out io.Writer) (int, error) {
			wr, err := resourcesync.NewWriter(out, h)
			if err != nil {
				return 0, err
			}
			for i, t := range starts {
				md := &resourcesync.MD{From: t}
				if t.Before(open) {
					md.Until = t.Add(p)
				}
				if err := wr.Write(&resourcesync.Entry{Loc: s.changeListURL(c.Name, t), MD: md}); err != nil {
					return i, err
				}
			}
			return len(starts), wr.Close()
		}})
}

// serveChangeList serves the Change List of the period named by name.
func (s *Server) serveChangeList(w http.ResponseWriter, r *http.Request, c *Collection, name string) {
	stamp, ok := strings.CutSuffix(name, ".xml")
	from, err := time.Parse(periodLayout, stamp)
	if !ok || err != nil || !s.periodStart(from).Equal(from) {
		s.fail(w, r, "changelist", http.StatusNotFound, nil)
		return
	}
	ctx := r.Context()
	st, err := s.cat.Stats(ctx, c.Name)
	if err != nil {
		s.fail(w, r, "changelist", http.StatusInternalServerError, fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	_, open := s.periods(st)
	if from.After(open) {
		s.fail(w, r, "changelist", http.StatusNotFound, nil)
		return
	}
	md := resourcesync.MD{Capability: resourcesync.CapChangeList, From: from}
	var until time.Time // zero: the open list reads to the end of the log
	rp := reply{doc: "changelist", contentType: xmlType, modified: st.Last}
	if from.Before(open) {
		md.Until = from.Add(s.cfg.ChangeListPeriod)
		until = md.Until
		rp.closed = true
		rp.modified = md.Until
	}
	rp.etag = etagOf("changelist", c.Name, from.UnixNano(), st.Changes, st.Last.UnixNano(), s.confID)
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
			return n, fmt.Errorf("collection %s: change list from %s: %w", c.Name, stamp, err)
		}
		return n, wr.Close()
	}
	s.send(w, r, rp)
}
