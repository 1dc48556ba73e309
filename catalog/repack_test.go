package catalog

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestRepackRewritesOlderForms: a catalog whose rows were all written
// in the forms of schema 13 (links as JSON, ops and media types written
// out), repacked two rows at a time: every read answers as before, every
// pack is the one the applier writes, and a second run rewrites nothing.
func TestRepackRewritesOlderForms(t *testing.T) {
	ctx := context.Background()
	path := packFixture(t)
	c := openAt(t, path)
	repo := event("s1", "c", "https://repo.example.org/bitstreams/1/content", resourcesync.Created, "pdf")
	repo.Type = "application/pdf"
	repo.Upstream.Type = "application/pdf"
	repo.Upstream.Modified = t0.Add(-time.Hour)
	repo.Upstream.Links = []resourcesync.Link{
		{Rel: "describedby", Href: "https://repo.example.org/items/1/metadata.xml", Type: "application/xml"},
		{Rel: "via", Href: "https://origin.example.net/files/1", Modified: repo.Upstream.Modified, Hash: repo.Upstream.Hash,
			Length: repo.Upstream.Length, Type: "application/pdf"}}
	tomb := event("s1", "c", "http://s1/never-held", resourcesync.Deleted, "")
	for i, ev := range []*viaduct.Event{repo, tomb} {
		if err := c.Apply(ctx, uint64(10+i), t0.Add(time.Minute+time.Duration(i)*time.Second), ev); err != nil {
			t.Fatal(err)
		}
	}
	uris := []string{"http://s1/a", "http://s1/b", "http://s1/never-held", repo.URI, "http://origin/a & b"}
	origins := []string{"http://origin/a & b", "http://s1/b", repo.URI}
	before := readFacts(t, c, uris, origins)
	applied := packsOf(t, c.reader)

	writeStep13(t, c)
	written := packsOf(t, c.reader)
	differ := 0
	for k, v := range written {
		if v != applied[k] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("no row was written in an older form: the test tests nothing")
	}
	c.Close()

	res, err := repack(ctx, path, nil, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.ResourcesRewritten + res.ChangesRewritten; got != int64(differ) ||
		res.Resources+res.Changes != int64(len(applied)) {
		t.Errorf("repack read %d resources and %d changes and rewrote %d and %d; want %d rows read and %d rewritten",
			res.Resources, res.Changes, res.ResourcesRewritten, res.ChangesRewritten, len(applied), differ)
	}
	c = openAt(t, path)
	if after := readFacts(t, c, uris, origins); !reflect.DeepEqual(before, after) {
		t.Errorf("after repack the catalog reads\n%+v\nbefore it\n%+v", after, before)
	}
	if repacked := packsOf(t, c.reader); !reflect.DeepEqual(repacked, applied) {
		t.Errorf("repacked packs differ from the applier's:\n%q\n%q", repacked, applied)
	}
	c.Close()

	again, err := Repack(ctx, path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourcesRewritten+again.ChangesRewritten != 0 || again.Resources != res.Resources || again.Changes != res.Changes {
		t.Errorf("a second repack: %+v, after %+v", again, res)
	}
}

// BenchmarkRepack measures Repack of a catalog of b.N resources of a
// repository (repoEvents), each with its creation in the change log, all
// written in the forms of schema 13, then VACUUM: the time each takes,
// and the file's bytes a resource before and after.
//
//	go test -run '^$' -bench Repack -benchtime 100000x ./catalog
func BenchmarkRepack(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "catalog.db")
	c := openAt(b, path)
	evs := repoEvents(b.N)
	for i := 0; i < len(evs); i += 2500 {
		if err := c.ApplyBatch(ctx, evs[i:min(i+2500, len(evs))]); err != nil {
			b.Fatal(err)
		}
	}
	writeStep13(b, c)
	if _, err := c.TruncateWAL(ctx); err != nil {
		b.Fatal(err)
	}
	c.Close()
	b.ResetTimer()
	res, err := Repack(ctx, path, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	repacked := b.Elapsed()
	if res.ResourcesRewritten != int64(b.N) || res.ChangesRewritten != int64(b.N) {
		b.Fatalf("repack rewrote %+v, want all %d of each", res, b.N)
	}
	before, after, err := Vacuum(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(repacked.Seconds()*1e6/n, "repack-s/million-resources")
	b.ReportMetric((b.Elapsed()-repacked).Seconds()*1e6/n, "vacuum-s/million-resources")
	b.ReportMetric(float64(before)/n, "before-B/resource")
	b.ReportMetric(float64(after)/n, "after-B/resource")
}
