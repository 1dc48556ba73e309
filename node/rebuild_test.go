package node

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestRebuildYieldsSameCatalog rebuilds a stopped node's catalog from its
// EVENTS: the new catalog holds the same resources and the same change
// log, with the same times, and the state EVENTS does not hold (the
// Dumps') carried over; the old file is kept aside.
func TestRebuildYieldsSameCatalog(t *testing.T) {
	ctx := context.Background()
	src := startSource(t, sim.Config{Resources: 300, Seed: 31, MinSize: 16, MaxSize: 256})
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	n := startNode(t, cfg, nil)
	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)
	src.Update(40)
	src.Delete(10)
	mustSync(t, n, "s")
	waitSettled(t, n, 60*time.Second)
	if err := n.Catalog().SetValue(ctx, "test/state", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	before := catalogContents(t, n.Catalog())
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	q, err := queue.Open(ctx, n.cfg.Queue, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var reports []catalog.RebuildProgress
	res, err := catalog.Rebuild(ctx, n.cfg.Catalog.Path, q, nil, func(p catalog.RebuildProgress) { reports = append(reports, p) })
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if last := reports[len(reports)-1]; last.Applied != last.Last || last.Last == 0 {
		t.Errorf("last progress report %+v: want every event applied", last)
	}
	if _, err := os.Stat(res.Aside); err != nil || res.CarryErr != nil || res.Carried == 0 {
		t.Errorf("old catalog aside at %q (%v); carried %d rows (%v)", res.Aside, err, res.Carried, res.CarryErr)
	}
	c, err := catalog.Open(ctx, n.cfg.Catalog.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	after := catalogContents(t, c)
	if !reflect.DeepEqual(before, after) {
		for k, v := range before {
			if !reflect.DeepEqual(v, after[k]) {
				t.Errorf("%s: rebuilt %d entries, had %d", k, len(after[k]), len(v))
				for i := range min(len(v), len(after[k])) {
					if v[i] != after[k][i] {
						t.Errorf("had     %s\nrebuilt %s", v[i], after[k][i])
						break
					}
				}
			}
		}
		t.Fatal("the rebuilt catalog differs from the one it replaces")
	}
	if v, err := c.Value(ctx, "test/state"); err != nil || string(v) != "kept" {
		t.Errorf("state after rebuild: %q, %v; want it carried over", v, err)
	}
}

// asJSON is v as JSON, which follows its pointers.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// catalogContents is every collection's resources and change log, each
// entry as text, by collection.
func catalogContents(t testing.TB, c *catalog.Catalog) map[string][]string {
	t.Helper()
	ctx := context.Background()
	cols, err := c.Collections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, col := range cols {
		err := c.Resources(ctx, col, "", 0, func(r *catalog.Resource) error {
			out[col+" resources"] = append(out[col+" resources"], asJSON(t, r))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Changes(ctx, col, 0, 0, func(ch *catalog.ChangeRecord) error {
			out[col+" changes"] = append(out[col+" changes"], asJSON(t, ch))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatal("the catalog holds nothing")
	}
	return out
}
