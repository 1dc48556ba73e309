package gc

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// slack is how much earlier than its first finding a blob must have been
// last committed or touched to be deleted: S3 keeps LastModified to the
// second, on the server's clock, which may be a little off the node's.
const slack = 5 * time.Minute

// sweep deletes the blobs that this collection and one at least Grace
// before it both found unreferenced, if idle since that first finding,
// and marks the others it finds unreferenced.
func (c *Collector) sweep(ctx context.Context, r *Report) error {
	now := c.now()
	refs, err := c.references(ctx, r)
	if err != nil {
		return err
	}
	superseded := map[string]bool{}
	if c.d.Packages != nil {
		keys, err := c.d.Packages.Superseded(ctx)
		if err != nil {
			return fmt.Errorf("gc: superseded dump packages: %w", err)
		}
		for _, k := range keys {
			superseded[k] = true
		}
	}
	peersAt, err := c.peersApplied(ctx, r.Seq)
	if err != nil {
		return err
	}
	marks := map[string]mark{}
	err = c.sw.List(ctx, func(in storage.Info) error {
		if refs.has(in.Key) || in.ModTime.After(now.Add(-c.cfg.Grace)) {
			return nil
		}
		first, ok := c.marks[in.Key]
		switch {
		case !ok:
			marks[in.Key] = mark{at: now, seq: r.Seq}
			return nil
		case now.Sub(first.at) < c.cfg.Grace, peersAt < first.seq:
			marks[in.Key] = first
			return nil
		}
		gone, err := c.sw.DeleteIdle(ctx, in.Key, first.at.Add(-slack))
		if err != nil {
			return err
		}
		if gone {
			r.Blobs++
			r.Bytes += in.Size
			if superseded[in.Key] {
				r.Packages++
			}
			c.log.DebugContext(ctx, "gc: blob deleted", "sha256", in.Key, "size", in.Size, "unreferenced_since", first.at)
		}
		return nil
	})
	c.marks, r.Marked = marks, len(marks)
	if err != nil {
		return fmt.Errorf("gc: sweeping the blob store: %w", err)
	}
	if cp, ok := c.sw.(storage.Compactor); ok {
		// The directory store's packs keep a deleted blob's bytes until
		// they are rewritten without them.
		freed, err := cp.Compact(ctx)
		r.Compacted = freed
		if err != nil {
			return fmt.Errorf("gc: compacting the blob store: %w", err)
		}
	}
	return c.forgetGone(ctx, superseded)
}

// peersApplied is the least sequence every node sharing the store has
// applied: own, the catalog's when there are no peers or none reported.
func (c *Collector) peersApplied(ctx context.Context, own uint64) (uint64, error) {
	if c.d.Peers == nil {
		return own, nil
	}
	seq, ok, err := c.d.Peers.MinApplied(ctx)
	if err != nil {
		return 0, fmt.Errorf("gc: how far other nodes have applied: %w", err)
	}
	if !ok {
		return own, nil
	}
	return min(seq, own), nil
}

// forgetGone tells the republisher to forget the superseded packages no
// longer in the store, deleted now or before.
func (c *Collector) forgetGone(ctx context.Context, superseded map[string]bool) error {
	var gone []string
	for k := range superseded {
		if _, err := c.d.Blobs.Stat(ctx, k); errors.Is(err, storage.ErrNotFound) {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	slices.Sort(gone)
	if err := c.d.Packages.Forget(ctx, gone); err != nil {
		return fmt.Errorf("gc: forgetting deleted dump packages: %w", err)
	}
	return nil
}

// references reads every blob key the catalog and the dumps refer to.
func (c *Collector) references(ctx context.Context, r *Report) (keySet, error) {
	var refs keySet
	seq, err := c.d.Catalog.BlobRefs(ctx, refs.add)
	if err != nil {
		return nil, fmt.Errorf("gc: catalog references: %w", err)
	}
	r.Seq = seq
	if c.d.Packages != nil {
		if err := c.d.Packages.BlobRefs(ctx, refs.add); err != nil {
			return nil, fmt.Errorf("gc: dump package references: %w", err)
		}
	}
	if c.d.Peers != nil {
		if err := c.d.Peers.BlobRefs(ctx, refs.add); err != nil {
			return nil, fmt.Errorf("gc: other nodes' references: %w", err)
		}
	}
	refs.seal()
	return refs, nil
}

// keySet is a sorted set of sha-256 keys, 32 bytes each: a million
// references take 32 MB, not the hundred a map of strings would.
type keySet [][32]byte

func (s *keySet) add(key string) error {
	var k [32]byte
	if len(key) != 64 {
		return nil // not a blob key: nothing in the store has it
	}
	if _, err := hex.Decode(k[:], []byte(key)); err != nil {
		return nil
	}
	*s = append(*s, k)
	return nil
}

func (s *keySet) seal() {
	slices.SortFunc(*s, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	*s = slices.Compact(*s)
}

func (s keySet) has(key string) bool {
	var k [32]byte
	if len(key) != 64 {
		return false
	}
	if _, err := hex.Decode(k[:], []byte(key)); err != nil {
		return false
	}
	_, found := slices.BinarySearchFunc(s, k, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	return found
}
