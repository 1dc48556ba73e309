package republish

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
)

// A period with more changes than one list may hold (MaxEntries, or
// MaxBytes by the entries' size estimates) is served as several Change
// Lists, its pieces, with consecutive intervals: the first from the
// period's start, each next one from the time of its first change, the
// last until the period's end (or open). The first piece keeps the
// period's URL; piece k > 1 is at <period>-<µs from the period's start>.xml.
// Pieces are cut in time order counting from the period's start, and the
// change log only grows at its end, so a piece, once followed by another,
// never changes; the pieces of a closed period are kept (pieceCache).

// changeCounter counts a collection's changes with from <= time < until
// (zero until: no bound) without reading them. A catalog that has it
// spares the server walking every period that fits one list.
type changeCounter interface {
	CountChanges(ctx context.Context, collection string, from, until time.Time) (int64, error)
}

// CountChanges counts the change log of collection for from <= time <
// until.
func (c *SQLiteCatalog) CountChanges(ctx context.Context, collection string, from, until time.Time) (int64, error) {
	return c.cat.CountChanges(ctx, collection, from, until)
}

var _ changeCounter = (*SQLiteCatalog)(nil)

// changeSizer gives, in time order, runs of a collection's changes with
// from <= time < until and the sums of their size bounds
// (catalog.SizeHint), without the changes; fn takes a run whole or is
// given its changes one by one (catalog.ScanChangeSizes). A catalog that
// has it spares the server decoding every change of a period to cut it.
type changeSizer interface {
	ChangeSizes(ctx context.Context, collection string, from, until time.Time, fn func(*catalog.ChangeRun) (bool, error)) error
}

// ChangeSizes walks the size bounds the change log keeps.
func (c *SQLiteCatalog) ChangeSizes(ctx context.Context, collection string, from, until time.Time, fn func(*catalog.ChangeRun) (bool, error)) error {
	return c.cat.ScanChangeSizes(ctx, collection, from, until, fn)
}

var _ changeSizer = (*SQLiteCatalog)(nil)

// pieceCache keeps the piece starts of closed periods, by collection and
// period start. Bounded: past maxPieceCache periods it starts again.
type pieceCache struct {
	mu sync.Mutex
	m  map[pieceKey][]time.Time
	// open keeps the last split of each open period, with the
	// collection's state it was made at: walking a large open period
	// again for every request for one of its pieces costs a scan of it.
	open map[pieceKey]openSplit
}

// openSplit is an open period's split and the collection's state (its
// change count, last change time and retention horizon) it holds for;
// with walked, also where the walk that made it stopped, so that a
// request after more changes walks only those (see pieces).
type openSplit struct {
	changes, last, horizon int64
	sp                     splitter // sp.out: the pieces' starts
	walked                 bool
}

// getOpen returns the kept split of an open period: current when it
// holds for st, else (current false) the last one kept, to resume.
func (c *pieceCache) getOpen(coll string, start time.Time, st Stats) (o openSplit, current, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok = c.open[pieceKey{coll, start.UnixNano()}]
	return o, ok && o.changes == st.Changes && o.last == st.Last.UnixNano() && o.horizon == st.Horizon.UnixNano(), ok
}

func (c *pieceCache) putOpen(coll string, start time.Time, st Stats, o openSplit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil || len(c.open) >= maxPieceCache {
		c.open = map[pieceKey]openSplit{}
	}
	o.changes, o.last, o.horizon = st.Changes, st.Last.UnixNano(), st.Horizon.UnixNano()
	c.open[pieceKey{coll, start.UnixNano()}] = o
}

type pieceKey struct {
	coll  string
	start int64
}

const maxPieceCache = 1 << 16

func (c *pieceCache) get(coll string, start time.Time) ([]time.Time, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[pieceKey{coll, start.UnixNano()}]
	return p, ok
}

func (c *pieceCache) put(coll string, start time.Time, p []time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxPieceCache {
		c.m = map[pieceKey][]time.Time{}
	}
	c.m[pieceKey{coll, start.UnixNano()}] = p
}

// pieces returns the starts of the pieces of the period starting at
// start, in order; the first is start. closed says the period has ended;
// st is the collection's stats, read before, which an open period's kept
// split is checked against.
func (s *Server) pieces(ctx context.Context, coll string, start time.Time, st Stats, closed bool) ([]time.Time, error) {
	if closed {
		if p, ok := s.split.get(coll, start); ok {
			return p, nil
		}
	} else {
		o, current, ok := s.split.getOpen(coll, start, st)
		if current {
			return o.sp.out, nil
		}
		if ok && o.walked && st.Changes > o.changes && o.horizon == st.Horizon.UnixNano() {
			// The log only grows at its end: walk the changes after
			// the last one walked, and keep the split if they are all
			// the collection gained (else something else changed the
			// log, and the period is split again from its start).
			sp := o.sp.clone()
			from := start
			if !sp.last.IsZero() {
				from = sp.last.Add(time.Microsecond)
			}
			n, err := s.walkSplit(ctx, coll, from, start.Add(s.cfg.ChangeListPeriod), &sp)
			if err != nil {
				return nil, err
			}
			if n == st.Changes-o.changes {
				s.split.putOpen(coll, start, st, openSplit{sp: sp, walked: true})
				return sp.out, nil
			}
		}
		sp, walked, err := s.split1(ctx, coll, start, false)
		if err != nil {
			return nil, err
		}
		s.split.putOpen(coll, start, st, openSplit{sp: sp, walked: walked})
		return sp.out, nil
	}
	sp, _, err := s.split1(ctx, coll, start, true)
	return sp.out, err
}

// split1 reads how the period starting at start splits into pieces;
// walked says whether it walked the period's changes (else it counted
// them, and they fit one list).
func (s *Server) split1(ctx context.Context, coll string, start time.Time, closed bool) (sp splitter, walked bool, err error) {
	end := start.Add(s.cfg.ChangeListPeriod)
	sp = newSplitter(start)
	n := int64(-1) // the period's changes, when the catalog counts them
	if cc, ok := s.cat.(changeCounter); ok {
		if n, err = cc.CountChanges(ctx, coll, start, end); err != nil {
			return sp, false, err
		}
		// A period that fits by count is one list unless its entries
		// average above pieceWalkBytes; only then is it walked.
		if n <= int64(s.cfg.MaxEntries) && n*pieceWalkBytes <= s.cfg.MaxBytes-docOverhead {
			if closed {
				s.split.put(coll, start, sp.out)
			}
			return sp, false, nil
		}
		if closed {
			if p, ok := s.loadPieces(coll, start, n); ok {
				s.split.put(coll, start, p)
				sp.out = p
				return sp, false, nil
			}
		}
	}
	if _, err := s.walkSplit(ctx, coll, start, end, &sp); err != nil {
		return sp, false, err
	}
	if closed {
		s.split.put(coll, start, sp.out)
		if n >= 0 {
			s.savePieces(coll, start, n, sp.out)
		}
	}
	return sp, true, nil
}

// walkSplit walks the changes of coll from from until end into sp and
// returns how many it walked.
func (s *Server) walkSplit(ctx context.Context, coll string, from, end time.Time, sp *splitter) (int64, error) {
	var n int64
	if cs, ok := s.cat.(changeSizer); ok {
		perRef := int64(len(s.cfg.BaseURL) + len(coll))
		err := cs.ChangeSizes(ctx, coll, from, end, func(r *catalog.ChangeRun) (bool, error) {
			size := r.Fixed + r.Refs*perRef + int64(r.Count)*pieceEntryExtra
			if r.Count == 1 {
				sp.add(r.First, size, s.cfg.MaxEntries, s.cfg.MaxBytes)
			} else if !sp.addRun(r.Last, r.Count, size, s.cfg.MaxEntries, s.cfg.MaxBytes) {
				return false, nil
			}
			n += int64(r.Count)
			return true, nil
		})
		return n, err
	}
	err := s.cat.Changes(ctx, coll, from, end, func(rec *Record) error {
		sp.add(rec.At, s.estimate(coll, rec)+pieceEntryExtra, s.cfg.MaxEntries, s.cfg.MaxBytes)
		n++
		return nil
	})
	return n, err
}

// splitter cuts a period's changes, walked in time order, into pieces:
// a piece ends before the change that would take it past MaxEntries or
// MaxBytes. Kept after a walk, it goes on with the changes that follow.
type splitter struct {
	out     []time.Time // the pieces' starts
	entries int         // in the last piece
	bytes   int64       // of the last piece, its document's overhead included
	last    time.Time   // of the last change walked; zero for none
}

func newSplitter(start time.Time) splitter {
	return splitter{out: []time.Time{start}, bytes: docOverhead}
}

func (sp *splitter) add(at time.Time, n int64, maxEntries int, maxBytes int64) {
	if sp.entries > 0 && (sp.entries >= maxEntries || sp.bytes+n > maxBytes) {
		sp.out = append(sp.out, at)
		sp.entries, sp.bytes = 0, docOverhead
	}
	sp.entries++
	sp.bytes += n
	sp.last = at
}

// addRun adds count changes whose sizes sum to n, the last at last, when
// adding them one by one would cut no piece among them: the piece's
// entries and bytes stay within the caps with all of them in it. It
// reports whether it did; else the changes are to be added one by one.
func (sp *splitter) addRun(last time.Time, count int, n int64, maxEntries int, maxBytes int64) bool {
	if sp.entries+count > maxEntries || sp.bytes+n > maxBytes {
		return false
	}
	sp.entries += count
	sp.bytes += n
	sp.last = last
	return true
}

// clone is a splitter to go on with, leaving sp's starts (handed out to
// readers) as they are.
func (sp splitter) clone() splitter {
	sp.out = slices.Clone(sp.out)
	return sp
}

// pieceWalkBytes is the average entry size below which a period that fits
// MaxEntries is taken to fit MaxBytes without being walked: a change
// entry with its via link runs to about 600 bytes; one with many links,
// longer, and a period of such entries near the byte cap is walked.
const pieceWalkBytes = 1024

// pieceEntryExtra bounds what a change entry holds beyond a Resource List
// entry of the same record (rs:md change and datetime).
const pieceEntryExtra = 64

// pieceName is the file name, without .xml, of the piece from from of the
// period starting at start.
func pieceName(start, from time.Time) string {
	name := start.UTC().Format(periodLayout)
	if from.After(start) {
		name += "-" + strconv.FormatInt(from.Sub(start).Microseconds(), 10)
	}
	return name
}

// parsePieceName reads a piece's file name (without .xml): the period's
// start and the piece's from.
func parsePieceName(stamp string) (start, from time.Time, ok bool) {
	period, off, hasOff := strings.Cut(stamp, "-")
	start, err := time.Parse(periodLayout, period)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	from = start
	if hasOff {
		us, err := strconv.ParseInt(off, 10, 64)
		if err != nil || us <= 0 || strconv.FormatInt(us, 10) != off {
			return time.Time{}, time.Time{}, false
		}
		from = start.Add(time.Duration(us) * time.Microsecond)
	}
	return start, from, true
}
