package republish

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
)

// snapshotLister is a catalog that lists a collection as it was just after
// an earlier EVENTS sequence, the one a Resource List Index was planned at,
// so that every part of the index reflects the catalog at the index's at
// however long a Destination takes to fetch them. SnapshotAt checks that
// the sequence can still be read and returns the collection's last change
// time at it (zero for none); it fails with catalog.ErrSnapshotAhead on a
// replica that has not applied the sequence yet and catalog.ErrSnapshotGone
// once retention has pruned past it.
type snapshotLister interface {
	SnapshotAt(ctx context.Context, collection string, seq uint64) (time.Time, error)
	ResourcesAt(ctx context.Context, collection, afterURI, lastURI string, seq uint64, fn func(*Record) error) error
}

var _ snapshotLister = (*SQLiteCatalog)(nil)

// SnapshotAt is the collection's last change time at seq, once seq is
// known readable.
func (c *SQLiteCatalog) SnapshotAt(ctx context.Context, collection string, seq uint64) (time.Time, error) {
	return c.cat.SnapshotAt(ctx, collection, seq)
}

// ResourcesAt streams the resources of collection in (afterURI, lastURI]
// as the catalog held them at seq, in URI order. fn gets the same *Record
// each time.
func (c *SQLiteCatalog) ResourcesAt(ctx context.Context, collection, afterURI, lastURI string, seq uint64, fn func(*Record) error) error {
	var rec Record
	return c.cat.ScanResourcesAt(ctx, collection, afterURI, lastURI, seq, func(rs *catalog.ResourceState) error {
		fromState(&rec, rs)
		return fn(&rec)
	})
}

// snapshotTime returns the at of a snapshot of coll taken at seq, and
// false when the catalog cannot list snapshots or seq is 0.
func (s *Server) snapshotTime(ctx context.Context, coll string, seq uint64) (time.Time, bool, error) {
	sl, ok := s.cat.(snapshotLister)
	if !ok || seq == 0 {
		return time.Time{}, false, nil
	}
	at, err := sl.SnapshotAt(ctx, coll, seq)
	return at, err == nil, err
}

// failSnapshot answers a part request whose snapshot cannot be read: 503
// with a Retry-After on a replica still behind it, 410 once retention has
// pruned past it (the Destination fetches the index again), else 500.
func (s *Server) failSnapshot(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, catalog.ErrSnapshotAhead):
		w.Header().Set("Retry-After", "1")
		s.fail(w, r, "resourcelist-part", fault(unavailable, nil))
	case errors.Is(err, catalog.ErrSnapshotGone):
		s.fail(w, r, "resourcelist-part", fault(gone, nil))
	default:
		s.fail(w, r, "resourcelist-part", err)
	}
}

// parseSeq reads a part URI's seq parameter: 0 when absent (a part of an
// index that named no snapshot, listed as the catalog is now), false when
// malformed.
func parseSeq(v string) (uint64, bool) {
	if v == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil && n > 0
}
