package sim

import (
	"io"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// currentPeriod is the number (from 0) of the period the open Change List
// covers: the one holding now, or the latest change when the clock lags it.
func (s *Source) currentPeriod() int {
	s.mu.RLock()
	last := s.last
	s.mu.RUnlock()
	t := max(s.cfg.Now().UnixNano(), last)
	return s.periodOf(t)
}

func (s *Source) periodOf(t int64) int {
	d := t - s.epoch.UnixNano()
	if d < 0 {
		return 0
	}
	return int(d / int64(s.cfg.Period))
}

// periodStart is the from of Change List k.
func (s *Source) periodStart(k int) time.Time {
	return s.epoch.Add(time.Duration(k) * s.cfg.Period)
}

func changeListPath(k int) string { return "/changelist-" + strconv.Itoa(k) + ".xml" }

// writeChangeListIndex writes the Change List Index: one closed list per
// elapsed period and the open one, which has no until.
func writeChangeListIndex(w io.Writer, s *Source, base string, _ Fault) error {
	cur := s.currentPeriod()
	entries := make([]resourcesync.Entry, 0, cur+1)
	for k := 0; k <= cur; k++ {
		md := &resourcesync.MD{From: s.periodStart(k)}
		if k < cur {
			md.Until = s.periodStart(k + 1)
		}
		entries = append(entries, resourcesync.Entry{Loc: base + changeListPath(k), MD: md})
	}
	return writeEntries(w, &resourcesync.Header{
		Root:  resourcesync.SitemapIndex,
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeList, From: s.epoch},
		Links: up(base + PathCapabilities),
	}, entries...)
}

// writeChangeList writes Change List k: the changes of its period in
// forward chronological order (reversed by the NonChronological fault).
func writeChangeList(w io.Writer, s *Source, base string, f Fault, k int) error {
	cur := s.currentPeriod()
	from, until := s.periodStart(k), s.periodStart(k+1)
	md := resourcesync.MD{Capability: resourcesync.CapChangeList, From: from}
	if k < cur {
		md.Until = until
	}
	changes := s.changesIn(from.UnixNano(), until.UnixNano())
	if f.NonChronological {
		slices.Reverse(changes)
	}
	wr, err := resourcesync.NewWriter(w, &resourcesync.Header{
		MD: md,
		Links: []resourcesync.Link{
			{Rel: "up", Href: base + PathCapabilities},
			{Rel: "index", Href: base + PathChangeList},
		},
	})
	if err != nil {
		return err
	}
	for i := range changes {
		e := s.changeEntry(base, &changes[i])
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	if f.ExtraLoc != "" {
		t := from
		if len(changes) > 0 {
			t = time.Unix(0, changes[len(changes)-1].time).UTC()
		}
		e := s.timed(resourcesync.Entry{Loc: f.ExtraLoc, MD: &resourcesync.MD{Change: resourcesync.Created}}, t, t)
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	return wr.Close()
}

// changesIn copies the changes with time in [from, until).
func (s *Source) changesIn(from, until int64) []change {
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := sort.Search(len(s.log), func(i int) bool { return s.log[i].time >= from })
	j := sort.Search(len(s.log), func(i int) bool { return s.log[i].time >= until })
	return slices.Clone(s.log[i:j])
}

// changeEntry is the Change List entry of one change.
func (s *Source) changeEntry(base string, c *change) resourcesync.Entry {
	md := &resourcesync.MD{Change: c.op.String()}
	t := time.Unix(0, c.time).UTC()
	mod := t
	if c.op == opDelete {
		mod = time.Time{}
		if s.cfg.UntimedDeletions {
			return resourcesync.Entry{Loc: base + resPath(int(c.id)), MD: md}
		}
	} else {
		md.Type = ContentType
		md.Hash, md.Length = s.declared(int(c.id), c.size, c.md5[:], c.sha256[:])
	}
	return s.timed(resourcesync.Entry{Loc: base + resPath(int(c.id)), MD: md}, t, mod)
}

// timed sets an entry's times in the Source's time form: in 1.0 the change
// time is lastmod; in 1.1 it is rs:md datetime, and lastmod is the
// resource's modification time, absent for a deletion.
func (s *Source) timed(e resourcesync.Entry, change, modified time.Time) resourcesync.Entry {
	if s.cfg.TimeForm == Form10 {
		e.LastMod = change
		return e
	}
	e.MD.DateTime = change
	e.LastMod = modified
	return e
}
