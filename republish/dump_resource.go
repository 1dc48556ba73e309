package republish

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// buildResourceDump packages a collection's resources as they are in one
// consistent read of the catalog, cutting a new package whenever one is
// full. As for a Resource List, at is the collection's last change time
// before the read and completed the one read once the read's snapshot is
// established, so every bitstream's state lies between the two; the
// packages share them, being cut from the same snapshot. A Destination
// that takes its baseline from the dump then applies every change from at
// on.
func (d *Dumps) buildResourceDump(ctx context.Context, coll string) (*resourceDump, error) {
	s := d.s
	st, err := s.cat.Stats(ctx, coll)
	if err != nil {
		return nil, fmt.Errorf("collection %s: stats: %w", coll, err)
	}
	rd := &resourceDump{At: s.headTime(st)}
	rd.Completed = rd.At
	up := []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(coll)}}
	header := func() *resourcesync.Header {
		return &resourcesync.Header{Links: up, MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: rd.At, Completed: rd.Completed}}
	}
	b := s.newEntryBuilder(coll)
	var cur *packageWriter
	defer func() {
		if cur != nil {
			cur.abort()
		}
	}()
	snapshot := false
	err = s.cat.Resources(ctx, coll, "", 0, func(rec *Record) error {
		if !snapshot {
			st2, err := s.cat.Stats(ctx, coll)
			if err != nil {
				return fmt.Errorf("stats: %w", err)
			}
			rd.Completed = s.headTime(st2)
			snapshot = true
		}
		e, err := b.resource(ctx, rec)
		if err != nil {
			return err
		}
		for range 2 {
			if cur == nil {
				if cur, err = d.newPackage(ctx, header()); err != nil {
					return err
				}
			}
			full, err := cur.add(ctx, e, rec)
			if err != nil || !full {
				return err
			}
			p, err := cur.finish(ctx)
			cur = nil
			if err != nil {
				return err
			}
			rd.Packages = append(rd.Packages, p)
		}
		return fmt.Errorf("resource %s: no room in an empty package", rec.URI)
	})
	if err != nil {
		return nil, fmt.Errorf("collection %s: resource dump: %w", coll, err)
	}
	if cur != nil {
		p, err := cur.finish(ctx)
		cur = nil
		if err != nil {
			return nil, fmt.Errorf("collection %s: resource dump: %w", coll, err)
		}
		rd.Packages = append(rd.Packages, p)
	}
	return rd, nil
}
