package republish

import (
	"context"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// The notifier (package notify) turns the change log into notifications
// whose entries are exactly the Change Lists' entries. These are the
// republisher's pieces it reads them with, so that an entry is built in
// one place whichever document carries it.

// CollectionNames are the names of the collections served now, those
// added by a reload included.
func (s *Server) CollectionNames() []string {
	cs := s.collections()
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// WhenAdded calls add for each collection added while the node runs,
// before any of its changes is served.
func (s *Server) WhenAdded(add func(ctx context.Context, name string) error) { s.whenAdded(add) }

// LastChange is the time of collection c's last change; zero when it has
// none.
func (s *Server) LastChange(ctx context.Context, c string) (time.Time, error) {
	st, err := s.cat.Stats(ctx, c)
	if err != nil {
		return time.Time{}, err
	}
	return st.Last, nil
}

// ChangeEntries calls fn, in the aggregator's order, with each change of
// collection c at from <= time < until (until zero: no end) and its entry
// exactly as a Change List gives it. The entry is reused: fn must not
// keep it.
func (s *Server) ChangeEntries(ctx context.Context, c string, from, until time.Time, fn func(at time.Time, e *resourcesync.Entry) error) error {
	b := s.newEntryBuilder(c)
	return s.cat.Changes(ctx, c, from, until, func(rec *Record) error {
		e, err := b.change(ctx, rec)
		if err != nil {
			return err
		}
		return fn(rec.At, e)
	})
}

// ChangeTimes calls fn with the time of each change of collection c at
// or after from, in order, until fn returns an error.
func (s *Server) ChangeTimes(ctx context.Context, c string, from time.Time, fn func(at time.Time) error) error {
	return s.cat.Changes(ctx, c, from, time.Time{}, func(rec *Record) error { return fn(rec.At) })
}

// CapabilityListURL is the Capability List of collection c, which a
// notification links up to.
func (s *Server) CapabilityListURL(c string) string { return s.capabilityListURL(c) }

// CountNotified adds n entries published in notifications to
// viaduct_republish_entries_total.
func (s *Server) CountNotified(n int) {
	s.m.entries.WithLabelValues("notification").Add(float64(n))
}
