package republish

import (
	"context"
	"strings"

	"github.com/viaduct-mirror/viaduct/catalog"
)

// A Resource List past MaxEntries entries or MaxBytes bytes is served as a
// Resource List Index whose parts are URI ranges of the catalog: part k
// holds the resources whose harvested URI is in (after_k, last_k], the
// first part starting at the beginning and the last one open-ended. The
// ranges are fixed when the index is generated, by a scan of the
// collection at one EVENTS sequence, and every part lists the catalog as
// it was at that very sequence, whenever it is fetched (see
// snapshotLister): the index and its parts are one snapshot, so a
// Destination that reads the parts slowly while the collection changes
// and then resumes from the index's at misses nothing. The ranges and the
// sequence travel in the part URIs, so any replica that has applied that
// sequence can serve any part without shared state.

// part is one URI range of a Resource List Index.
type part struct {
	after, last string
	entries     int
	bytes       int64
}

// docOverhead bounds the bytes of a list's header and closing tag.
const docOverhead = 2048

// partPlanner is a catalog that plans the parts by itself, from the
// entries' SizeHint, without handing every resource to the server: a
// million-resource collection is then planned by a walk of an index. It
// names the catalog state each plan was made from (the sequence of the
// last applied event), which the server keeps the plan by (see
// planCache), the revision a request reads first.
type partPlanner interface {
	revisioned
	PlanResources(ctx context.Context, collection string, maxEntries int, perRef, budget int64) (cuts []catalog.Cut, seq uint64, err error)
}

// plan cuts a collection into parts that respect the limits, for the
// catalog state rev (see revision), and returns the EVENTS sequence the
// plan was made at (0 when the catalog does not say): the snapshot every
// part of the index lists (see snapshotLister). The parts returned are
// shared: the caller must not change them.
func (s *Server) plan(ctx context.Context, coll string, rev uint64) ([]part, uint64, error) {
	if pp, ok := s.cat.(partPlanner); ok {
		return s.planCached(ctx, pp, coll, rev)
	}
	var parts []part
	cur := part{bytes: docOverhead}
	prev := ""
	err := s.cat.Resources(ctx, coll, "", 0, func(rec *Record) error {
		n := s.estimate(coll, rec)
		if cur.entries > 0 && (cur.entries >= s.cfg.MaxEntries || cur.bytes+n > s.cfg.MaxBytes) {
			cur.last = prev
			parts = append(parts, cur)
			cur = part{after: prev, bytes: docOverhead}
		}
		cur.entries++
		cur.bytes += n
		prev = rec.URI
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return append(parts, cur), 0, nil
}

// planCached is plan for a catalog that plans parts itself: the same
// parts, the last one open-ended. A plan is kept until the catalog
// changes: the parts depend on nothing else (the limits and the base URL
// are fixed for the server's life), so a plan made from the state a
// request finds (seq, read by the request) is the one that request would
// make.
func (s *Server) planCached(ctx context.Context, pp partPlanner, coll string, seq uint64) ([]part, uint64, error) {
	if parts, ok := s.plans.get(coll, seq); ok {
		return parts, seq, nil
	}
	perRef := int64(len(s.cfg.BaseURL) + len(coll))
	cuts, at, err := pp.PlanResources(ctx, coll, s.cfg.MaxEntries, perRef, s.cfg.MaxBytes-docOverhead)
	if err != nil {
		return nil, 0, err
	}
	parts := make([]part, 0, max(len(cuts), 1))
	after := ""
	for _, c := range cuts {
		parts = append(parts, part{after: after, last: c.Last, entries: c.Entries})
		after = c.Last
	}
	if len(parts) == 0 {
		parts = append(parts, part{})
	}
	parts[len(parts)-1].last = ""
	s.plans.put(coll, at, parts)
	return parts, at, nil
}

// estimate bounds the bytes of a record's entry from above without
// building it (see catalog.SizeHint, which every catalog's parts obey).
func (s *Server) estimate(coll string, rec *Record) int64 {
	fixed, refs := catalog.SizeHint(rec.Type, &rec.Upstream)
	return fixed + refs*int64(len(s.cfg.BaseURL)+len(coll))
}

// inRange reports whether uri belongs to a part whose upper bound is last
// ("" for no bound).
func inRange(uri, last string) bool {
	return last == "" || strings.Compare(uri, last) <= 0
}
