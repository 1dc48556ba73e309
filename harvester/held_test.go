package harvester

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// lookupCounter is the catalog, counting the baseline's lookups.
type lookupCounter struct {
	*catalog.Catalog
	n atomic.Int64
}

func (l *lookupCounter) Lookup(ctx context.Context, collection, uri string) (catalog.Lookup, bool, error) {
	l.n.Add(1)
	return l.Catalog.Lookup(ctx, collection, uri)
}

// TestFirstBaselineSkipsLookups: a baseline into a collection that holds
// nothing queues a creation for every entry without asking the catalog
// about each; once the collection holds resources, every entry is
// compared again and only what changed is queued.
func TestFirstBaselineSkipsLookups(t *testing.T) {
	e := newEnv(t)
	// No Change Lists: every pass is a baseline.
	srv := startSim(t, sim.Config{Resources: 1500, Seed: 3, PartSize: 1000, NoChangeLists: true})
	held := &lookupCounter{Catalog: e.cat}
	h, err := New(Defaults(), []SourceConfig{simSource("s", srv)},
		Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: held, Publisher: e.pub},
		slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })

	sync1(t, h, "s")
	base := e.drain()
	if len(base) != 1500 {
		t.Fatalf("first baseline queued %d changes, want 1500", len(base))
	}
	for _, c := range base {
		if c.Op != resourcesync.Created {
			t.Fatalf("first baseline: %s %s, want created", c.Op, c.URI)
		}
	}
	if n := held.n.Load(); n != 0 {
		t.Errorf("first baseline looked up %d entries, want none", n)
	}
	e.apply(base)

	// Two resources change: the next baseline compares every entry and
	// queues only those two.
	srv.Update(2)
	sync1(t, h, "s")
	again := e.drain()
	if len(again) != 2 {
		t.Fatalf("second baseline queued %d changes, want 2: %v", len(again), again)
	}
	for _, c := range again {
		if c.Op != resourcesync.Updated {
			t.Errorf("second baseline: %s %s, want updated", c.Op, c.URI)
		}
	}
	if n := held.n.Load(); n != 1500 {
		t.Errorf("second baseline looked up %d entries, want 1500", n)
	}
}
