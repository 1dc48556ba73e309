package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestProvenance(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	mod := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	originLen := int64(2)

	// Harvested straight from its origin.
	direct := event("origin", "c1", "http://origin/x", cr, "x1")
	direct.Upstream.Modified = mod
	mustApply(t, c, 1, direct)

	// Harvested from another aggregator whose via link names the origin.
	viaAgg := event("agg", "c2", "http://agg/copy/y", cr, "y1")
	viaAgg.Upstream.Modified = mod.Add(time.Hour)
	viaAgg.Upstream.Links = []resourcesync.Link{
		{Rel: "describedby", Href: "http://agg/meta/y"},
		{Rel: "via", Href: "http://origin/y", Modified: mod, Length: &originLen,
			Hash: resourcesync.Hashes{{Alg: "md5", Value: "0123456789abcdef0123456789abcdef"}}},
	}
	mustApply(t, c, 2, viaAgg)

	hops, err := c.Provenance(ctx, "http://origin/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(hops) != 2 || hops[0].URI != "http://origin/x" || hops[0].Role != RoleOrigin || !hops[0].Modified.Equal(mod) ||
		hops[1].Role != RoleAggregator || hops[1].URI != "" || hops[1].Collection != "c1" ||
		hops[1].Hash.Get(resourcesync.SHA256) != sha("x1") || *hops[1].Length != 2 {
		t.Fatalf("direct provenance = %+v", hops)
	}

	for _, uri := range []string{"http://origin/y", "http://agg/copy/y"} {
		hops, err := c.Provenance(ctx, uri)
		if err != nil {
			t.Fatalf("Provenance(%s): %v", uri, err)
		}
		if len(hops) != 3 {
			t.Fatalf("Provenance(%s) = %+v, want origin, upstream aggregator, here", uri, hops)
		}
		o, a, here := hops[0], hops[1], hops[2]
		if o.URI != "http://origin/y" || o.Role != RoleOrigin || !o.Modified.Equal(mod) || *o.Length != 2 ||
			o.Hash.Get("md5") != "0123456789abcdef0123456789abcdef" {
			t.Errorf("Provenance(%s) origin = %+v", uri, o)
		}
		if a.URI != "http://agg/copy/y" || a.Role != RoleAggregator || !a.Modified.Equal(mod.Add(time.Hour)) {
			t.Errorf("Provenance(%s) upstream = %+v", uri, a)
		}
		if here.Collection != "c2" || here.Role != RoleAggregator || !here.Modified.Equal(t0.Add(2*time.Second)) {
			t.Errorf("Provenance(%s) here = %+v", uri, here)
		}
	}
	r, err := c.Resource(ctx, "c2", "http://agg/copy/y")
	if err != nil || r.Origin != "http://origin/y" {
		t.Fatalf("resource origin = %v, %v", r, err)
	}
	if _, err := c.Provenance(ctx, "http://elsewhere/z"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Provenance of an unknown URI: %v, want ErrNotFound", err)
	}
}

// TestHeldByHashIndex: the fetch workers ask HeldByHash of changes they
// cannot skip otherwise, so it must be a seek in changes_md5 and then in
// the resources' key, never a scan of the catalog; and a catalog of
// schema version 5 loses the sha-256 index (schemaV6), finding by md5 as
// a new one does.
func TestHeldByHashIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := openAt(t, path)
	checkByMD5Plan(t, c, heldByMD5SQL, append(md5ArgList(md5hex("x")), "s1", nil, digestValue(sha("x")))...)
	c.Close()

	toV8(t, path)
	execOn(t, path, "CREATE INDEX resources_sha256 ON resources (source, sha256)", "PRAGMA user_version = 5")
	c = openAt(t, path)
	var n int
	if err := c.reader.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'resources_sha256'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("resources_sha256 after migration: %d, %v; want it dropped", n, err)
	}
	ev := event("s1", "c", "http://s1/a", cr, "bytes")
	mustApply(t, c, 1, ev)
	r, err := c.HeldByHash(ctx, "s1", resourcesync.Hashes{{Alg: "md5", Value: ev.MD5}, {Alg: "sha-256", Value: ev.SHA256}}, nil)
	if err != nil || r.URI != ev.URI {
		t.Fatalf("HeldByHash after migration = %v, %v; want %s", r, err, ev.URI)
	}
}

func TestHeldByHash(t *testing.T) {
	ctx := context.Background()
	c := openTemp(t)
	mustApply(t, c, 1, event("s1", "c", "http://s1/a", cr, "same bytes"))
	mustApply(t, c, 2, event("s1", "c", "http://s1/gone", cr, "gone bytes"))
	mustApply(t, c, 3, event("s1", "c", "http://s1/gone", del, ""))
	held := event("s1", "c", "", cr, "same bytes")
	n := held.Length
	wrong := n + 1
	for _, tc := range []struct {
		name   string
		source string
		hs     resourcesync.Hashes
		length *int64
		want   string
	}{
		{"md5 and sha-256", "s1", resourcesync.Hashes{{Alg: "md5", Value: held.MD5}, {Alg: "sha-256", Value: held.SHA256}}, &n, "http://s1/a"},
		{"md5 without length", "s1", resourcesync.Hashes{{Alg: "md5", Value: held.MD5}}, nil, "http://s1/a"},
		{"wrong length", "s1", resourcesync.Hashes{{Alg: "md5", Value: held.MD5}}, &wrong, ""},
		{"md5 with another sha-256", "s1", resourcesync.Hashes{{Alg: "md5", Value: held.MD5}, {Alg: "sha-256", Value: sha("other bytes")}}, nil, ""},
		// The blob store answers for a sha-256 alone (its keys are
		// sha-256 digests); the catalog has no index to find it by.
		{"sha-256 only", "s1", resourcesync.Hashes{{Alg: "sha-256", Value: held.SHA256}}, &n, ""},
		{"other source", "s2", resourcesync.Hashes{{Alg: "md5", Value: held.MD5}}, nil, ""},
		{"sha-1 only", "s1", resourcesync.Hashes{{Alg: "sha-1", Value: "00"}}, nil, ""},
		{"deleted copy", "s1", resourcesync.Hashes{{Alg: "md5", Value: md5hex("gone bytes")}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.HeldByHash(ctx, tc.source, tc.hs, tc.length)
			if tc.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("HeldByHash = %v, %v; want ErrNotFound", r, err)
				}
				return
			}
			if err != nil || r.URI != tc.want {
				t.Fatalf("HeldByHash = %v, %v; want %s", r, err, tc.want)
			}
		})
	}
}
