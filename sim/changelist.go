package sim

import (
	"errors"
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

// changeListPath is the path of piece j (from 0) of period k's Change
// List: a period with more than ChangeListSize changes is served as
// several lists, the first at the period's own path.
func changeListPath(k, j int) string {
	if j == 0 {
		return "/changelist-" + strconv.Itoa(k) + ".xml"
	}
	return "/changelist-" + strconv.Itoa(k) + "-" + strconv.Itoa(j) + ".xml"
}

// piece is one Change List: a period's changes, or a run of at most
// ChangeListSize of them, with its interval.
type piece struct {
	from, until time.Time // until zero: open
	changes     []change
}

// pieces cuts period k's changes into lists of at most ChangeListSize:
// the first from the period's start, each next from the time of its first
// change, the last until the period's end (none for the open period).
func (s *Source) pieces(k, cur int) []piece {
	from, until := s.periodStart(k), s.periodStart(k+1)
	changes := s.changesIn(from.UnixNano(), until.UnixNano())
	size := s.cfg.ChangeListSize
	var out []piece
	for i := 0; i == 0 || i < len(changes); i += size {
		p := piece{from: from, changes: changes[i:min(i+size, len(changes))]}
		if i > 0 {
			p.from = time.Unix(0, changes[i].time).UTC()
			out[len(out)-1].until = p.from
		}
		out = append(out, p)
	}
	if k < cur {
		out[len(out)-1].until = until
	}
	return out
}

// writeChangeListIndex writes the Change List Index: the lists of every
// elapsed period and of the open one; the last list has no until.
func writeChangeListIndex(w io.Writer, s *Source, base string, _ Fault) error {
	cur := s.currentPeriod()
	entries := make([]resourcesync.Entry, 0, cur+1)
	for k := 0; k <= cur; k++ {
		for j, p := range s.pieces(k, cur) {
			md := &resourcesync.MD{From: p.from, Until: p.until}
			entries = append(entries, resourcesync.Entry{Loc: base + changeListPath(k, j), MD: md})
		}
	}
	return writeEntries(w, &resourcesync.Header{
		Root:  resourcesync.SitemapIndex,
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeList, From: s.epoch},
		Links: up(base + PathCapabilities),
	}, entries...)
}

// writeChangeList writes piece j of period k's Change List: its changes
// in forward chronological order (reversed by the NonChronological
// fault).
func writeChangeList(w io.Writer, s *Source, base string, f Fault, k, j int) error {
	ps := s.pieces(k, s.currentPeriod())
	if j >= len(ps) {
		return errNoPiece
	}
	p := ps[j]
	md := resourcesync.MD{Capability: resourcesync.CapChangeList, From: p.from, Until: p.until}
	changes := p.changes
	if f.NonChronological {
		changes = slices.Clone(changes)
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
	if f.ExtraLoc != "" && j == len(ps)-1 {
		t := p.from
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

// errNoPiece is a Change List path past the pieces of its period.
var errNoPiece = errors.New("simulated Source: no such Change List")

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
