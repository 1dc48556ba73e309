package catalog

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestLookupsByOriginSearchIndexes: each lookup by origin or URI searches
// resources by its indexes, the partial resources_origin among them,
// instead of scanning the table (a scan of millions of rows per request
// is what a query that no longer states the index's condition would get).
func TestLookupsByOriginSearchIndexes(t *testing.T) {
	c := openTemp(t)
	for name, q := range map[string]string{"byOriginSQL": byOriginSQL, "byURISQL": byURISQL, "provenanceSQL": provenanceSQL} {
		all := strings.Join(queryPlan(t, c, q, "http://origin.example/doc", "c"), "; ")
		if strings.Contains(all, "SCAN resources") || !strings.Contains(all, "USING INDEX resources_origin") ||
			!strings.Contains(all, "USING PRIMARY KEY (collection=? AND uri=?)") {
			t.Errorf("%s: plan %q, want searches only, by resources_origin and by primary key", name, all)
		}
	}
}

// holdOriginTwice applies one origin reached twice: through an aggregator
// into collection c, as event 1, and harvested from the origin itself into
// collection d, as event 2.
func holdOriginTwice(t *testing.T, c *Catalog) (origin, harvested string) {
	t.Helper()
	origin, harvested = "http://origin.example/doc", "http://agg.example/c/r/http/origin.example/doc"
	ev := event("agg", "c", harvested, resourcesync.Created, "doc")
	ev.Upstream.Links = []resourcesync.Link{{Rel: "via", Href: origin}}
	mustApply(t, c, 1, ev)
	mustApply(t, c, 2, event("direct", "d", origin, resourcesync.Created, "doc"))
	return origin, harvested
}

// migratedWithOriginTwice writes holdOriginTwice's catalog, puts an older
// schema back on it with stmts (execOn), and opens it again, migrating
// it.
func migratedWithOriginTwice(t *testing.T, stmts ...string) (c *Catalog, origin, harvested string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	old := openAt(t, path)
	origin, harvested = holdOriginTwice(t, old)
	old.Close()
	toV8(t, path)
	execOn(t, path, stmts...)
	return openAt(t, path), origin, harvested
}

// TestOriginIndexMigration: a catalog written with the whole origin index
// (schema 6) gets the partial one, and its lookups by origin still find
// resources harvested through an aggregator and from their origin.
func TestOriginIndexMigration(t *testing.T) {
	ctx := context.Background()
	c, origin, _ := migratedWithOriginTwice(t,
		"DROP INDEX resources_origin", "CREATE INDEX resources_origin ON resources (origin)", "PRAGMA user_version = 6")
	var def string
	if err := c.reader.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'resources_origin'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "WHERE origin <> uri") {
		t.Errorf("resources_origin after migration: %s", def)
	}
	found, err := c.ResourcesByURI(ctx, origin)
	if err != nil || len(found) != 2 {
		t.Fatalf("ResourcesByURI(%s) = %d resources, %v; want 2", origin, len(found), err)
	}
	hops, err := c.Provenance(ctx, origin)
	if err != nil || len(hops) == 0 || hops[len(hops)-1].Collection != "d" {
		t.Errorf("Provenance(%s) = %+v, %v", origin, hops, err)
	}
	rs, err := c.ResourceByOrigin(ctx, "c", origin)
	if err != nil || rs.Origin != origin {
		t.Errorf("ResourceByOrigin(c, %s) = %+v, %v", origin, rs, err)
	}
}

// TestSourceAndURIIndexMigration: a catalog written with the indexes of
// resources by Source and by URI (schema 7) loses them, and its lookups
// by URI and its walks by Source still find what it holds.
func TestSourceAndURIIndexMigration(t *testing.T) {
	ctx := context.Background()
	c, origin, harvested := migratedWithOriginTwice(t, "CREATE INDEX resources_source ON resources (source, collection, uri)",
		"CREATE INDEX resources_uri ON resources (uri)", "PRAGMA user_version = 7")
	var left int
	if err := c.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema
		WHERE name IN ('resources_source', 'resources_uri')`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d of the two indexes left after migration, %v", left, err)
	}
	found, err := c.ResourcesByURI(ctx, harvested)
	if err != nil || len(found) != 1 || found[0].Collection != "c" {
		t.Errorf("ResourcesByURI(%s) = %+v, %v; want the one in c", harvested, found, err)
	}
	found, err = c.ResourcesByURI(ctx, origin)
	if err != nil || len(found) != 2 {
		t.Errorf("ResourcesByURI(%s) = %d resources, %v; want 2", origin, len(found), err)
	}
	var walked []string
	err = c.SourceHeld(ctx, "direct", "d", func(e *HeldEntry) error {
		walked = append(walked, e.URI)
		return nil
	})
	if err != nil || len(walked) != 1 || walked[0] != origin {
		t.Errorf("SourceHeld(direct, d) = %v, %v; want [%s]", walked, err, origin)
	}
}
