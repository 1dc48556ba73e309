package republish

import (
	"context"
	"slices"
	"time"
)

// A Resource Dump rebuilt retires the previous one's packages (still
// served, unlisted, until the next rebuild) and drops those retired
// before; a Change Dump keeps its MaxChangeDumps latest packages. What is
// dropped is superseded: recorded in the collection's state until garbage
// collection (package gc) has deleted its blobs, which it does once they
// have been unreferenced for its grace period. Dumps is the gc.Packages of
// a node.

// Dumps returns the server's Dumps, nil when NewDumps has not made them
// (the node builds no dumps).
func (s *Server) Dumps() *Dumps { return s.dumps }

// packageKeys lists the ZIP key of every package ds serves.
func (ds *dumpState) packageKeys() []string {
	var keys []string
	lists := [][]dumpPackage{ds.Changes, ds.Retired}
	if ds.Resource != nil {
		lists = append(lists, ds.Resource.Packages)
	}
	for _, l := range lists {
		for _, p := range l {
			keys = append(keys, p.Key)
		}
	}
	return keys
}

// dropped lists the ZIP keys cur serves and next does not.
func dropped(cur, next *dumpState) []string {
	keep := next.packageKeys()
	var out []string
	for _, k := range cur.packageKeys() {
		if !slices.Contains(keep, k) && !slices.Contains(next.Superseded, k) {
			out = append(out, k)
		}
	}
	return out
}

// BlobRefs names every blob the dumps serve: each package's ZIP and its
// manifest copy, listed or retired.
func (d *Dumps) BlobRefs(ctx context.Context, fn func(key string) error) error {
	for _, c := range d.s.collections() {
		ds := d.current(c.Name)
		lists := [][]dumpPackage{ds.Changes, ds.Retired}
		if ds.Resource != nil {
			lists = append(lists, ds.Resource.Packages)
		}
		for _, l := range lists {
			for _, p := range l {
				if err := fn(p.Key); err != nil {
					return err
				}
				if err := fn(p.Manifest); err != nil {
					return err
				}
			}
		}
	}
	return ctx.Err()
}

// Superseded lists the ZIP keys of the packages no longer served.
func (d *Dumps) Superseded(ctx context.Context) ([]string, error) {
	var out []string
	for _, c := range d.s.collections() {
		out = append(out, d.current(c.Name).Superseded...)
	}
	return out, ctx.Err()
}

// Forget drops keys from the superseded packages: their blobs are gone.
func (d *Dumps) Forget(ctx context.Context, keys []string) error {
	for _, c := range d.s.collections() {
		if !slices.ContainsFunc(d.current(c.Name).Superseded, func(k string) bool { return slices.Contains(keys, k) }) {
			continue
		}
		err := d.update(ctx, c.Name, func(ds *dumpState) {
			ds.Superseded = slices.DeleteFunc(ds.Superseded, func(k string) bool { return slices.Contains(keys, k) })
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ChangeListPeriod is the period Change Lists cover, defaults applied:
// retention cuts the change log on it, so that the first list still
// served is whole.
func (s *Server) ChangeListPeriod() time.Duration { return s.cfg.ChangeListPeriod }
