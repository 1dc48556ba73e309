package republish

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/provenance"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/resourcesync/dump"
)

// TestDumpDocuments builds the fixture's Dumps and compares every document
// with its golden file: the Capability List that lists them, the Resource
// Dump and its manifest copy, the Change Dump and its manifest copy, and
// the empty collection's. Every one passes the validator.
func TestDumpDocuments(t *testing.T) {
	f := newDumpFixture(t, DumpConfig{})
	ctx := context.Background()
	for _, c := range []string{"alpha", "beta"} {
		if err := f.dumps.Rebuild(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	_, rd, _ := f.readDump(t, "/alpha/resourcedump.xml")
	_, cd, _ := f.readDump(t, "/alpha/changedump.xml")
	if len(rd) != 1 || len(cd) != 1 {
		t.Fatalf("alpha has %d Resource Dump and %d Change Dump packages, want 1 and 1", len(rd), len(cd))
	}
	docs := []struct{ name, path string }{
		{"dumps-capabilitylist.xml", "/alpha/capabilitylist.xml"},
		{"resourcedump.xml", "/alpha/resourcedump.xml"},
		{"resourcedump-manifest.xml", pathOf(t, rd[0].Links[0].Href)},
		{"changedump.xml", "/alpha/changedump.xml"},
		{"changedump-manifest.xml", pathOf(t, cd[0].Links[0].Href)},
		{"resourcedump-empty.xml", "/beta/resourcedump.xml"},
		{"changedump-empty.xml", "/beta/changedump.xml"},
	}
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			resp, body := f.get(t, d.path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %s", d.path, resp.Status)
			}
			golden(t, d.name, body)
			validate(t, d.name, body)
		})
	}
}

// TestResourceDumpPackage opens the Resource Dump's package as a
// Destination would: every bitstream verifies, every resource held is
// there once with the bytes the catalog holds, the manifest copy is the
// package's manifest.xml, and the package is served with its type, length
// and entity tag.
func TestResourceDumpPackage(t *testing.T) {
	f := newDumpFixture(t, DumpConfig{})
	ctx := context.Background()
	if err := f.dumps.Rebuild(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	h, rd, _ := f.readDump(t, "/alpha/resourcedump.xml")
	st, _ := f.cat.Stats(ctx, "alpha")
	if !h.MD.At.Equal(st.Last) || !h.MD.Completed.Equal(st.Last) {
		t.Errorf("at %s completed %s, want both the last change %s", h.MD.At, h.MD.Completed, st.Last)
	}
	uri := rd[0].Loc
	p := f.openPackage(t, uri, resourcesync.KindResourceDumpManifest)
	if !p.Header().MD.At.Equal(h.MD.At) {
		t.Errorf("manifest at %s, dump at %s", p.Header().MD.At, h.MD.At)
	}
	want := map[string]*Record{}
	f.cat.Resources(ctx, "alpha", "", 0, func(r *Record) error {
		rec := *r
		uri, _ := f.srv.ResourceURI("alpha", provenance.OriginURI(&r.Upstream))
		want[uri] = &rec
		return nil
	})
	err := p.Entries(ctx, func(e *resourcesync.Entry, body *dump.Body) error {
		rec := want[e.Loc]
		if rec == nil {
			t.Errorf("package holds %s, which the catalog does not hold (or twice)", e.Loc)
			return nil
		}
		delete(want, e.Loc)
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		if !bytes.Equal(data, f.blobs.blobs[rec.SHA256]) {
			t.Errorf("%s: bytes differ from the catalog's", e.Loc)
		}
		if e.MD.Type != rec.Type || e.MD.Hash.Get(resourcesync.SHA256) != rec.SHA256 || !e.LastMod.Equal(rec.At) {
			t.Errorf("%s: manifest says %s %s %s, catalog %s %s %s", e.Loc, e.MD.Type, e.MD.Hash, e.LastMod, rec.Type, rec.SHA256, rec.At)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for loc := range want {
		t.Errorf("%s is held but not in the package", loc)
	}

	resp, zipBytes := f.get(t, pathOf(t, uri))
	if ct := resp.Header.Get("Content-Type"); ct != "application/zip" {
		t.Errorf("package Content-Type %q", ct)
	}
	if resp.ContentLength != *rd[0].MD.Length || resp.ContentLength != int64(len(zipBytes)) {
		t.Errorf("package Content-Length %d, dump says %d, got %d bytes", resp.ContentLength, *rd[0].MD.Length, len(zipBytes))
	}
	etag := resp.Header.Get("ETag")
	if etag != `"`+rd[0].MD.Hash.Get(resourcesync.SHA256)+`"` {
		t.Errorf("package ETag %s, hash %s", etag, rd[0].MD.Hash)
	}
	if resp, _ := f.get(t, pathOf(t, uri), "If-None-Match", etag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET of the package: %s", resp.Status)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipBytes), int64(len(zipBytes)))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := zr.Open(dump.ManifestName)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := io.ReadAll(inner)
	_, cp := f.get(t, pathOf(t, rd[0].Links[0].Href))
	if !bytes.Equal(manifest, cp) {
		t.Errorf("manifest copy differs from the package's manifest.xml")
	}
	for _, path := range []string{"/alpha/dumps/" + rd[0].MD.Hash.Get(resourcesync.SHA256) + ".xml", "/alpha/dumps/" + f.blobs.keys()[0] + ".zip", "/beta/dumps/" + rd[0].MD.Hash.Get(resourcesync.SHA256) + ".zip", "/alpha/dumps/../x.zip"} {
		if resp, _ := f.get(t, path); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, resp.Status)
		}
	}
}

// TestChangeDumpPackages checks that each closed period becomes one
// package with its changes in order, deletions without a path, each
// bitstream as it was at its change; that the open period waits; and that
// consecutive packages leave no gap.
func TestChangeDumpPackages(t *testing.T) {
	f := newDumpFixture(t, DumpConfig{})
	ctx := context.Background()
	if err := f.dumps.UpdateChangeDump(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	_, cd, _ := f.readDump(t, "/alpha/changedump.xml")
	if len(cd) != 1 {
		t.Fatalf("%d packages with the 11:00 period open, want 1", len(cd))
	}
	// A change at 12:05 closes the 11:00 period.
	f.add("alpha", "http://origin.example.com/new.txt", "created", base.Add(125*time.Minute), "new", "text/plain", viaduct.Change{Source: "origin"})
	if err := f.dumps.UpdateChangeDump(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	h, cd, body := f.readDump(t, "/alpha/changedump.xml")
	validate(t, "changedump.xml", body)
	if len(cd) != 2 {
		t.Fatalf("%d packages, want 2", len(cd))
	}
	if !h.MD.From.Equal(base) || !cd[0].MD.From.Equal(base) || !cd[0].MD.Until.Equal(cd[1].MD.From) || !cd[1].MD.Until.Equal(base.Add(2*time.Hour)) {
		t.Errorf("intervals: dump from %s, packages [%s, %s) [%s, %s)", h.MD.From, cd[0].MD.From, cd[0].MD.Until, cd[1].MD.From, cd[1].MD.Until)
	}
	var got []string
	var deleted *resourcesync.Entry
	for _, e := range cd {
		p := f.openPackage(t, e.Loc, resourcesync.KindChangeDumpManifest)
		if !p.Header().MD.From.Equal(e.MD.From) || !p.Header().MD.Until.Equal(e.MD.Until) {
			t.Errorf("manifest [%s, %s), dump says [%s, %s)", p.Header().MD.From, p.Header().MD.Until, e.MD.From, e.MD.Until)
		}
		err := p.Entries(ctx, func(e *resourcesync.Entry, body *dump.Body) error {
			got = append(got, e.MD.Change+" "+e.Loc)
			if body == nil {
				c := *e
				deleted = &c
				return nil
			}
			data, err := io.ReadAll(body)
			if err != nil {
				return err
			}
			if !bytes.Equal(data, f.blobs.blobs[e.MD.Hash.Get(resourcesync.SHA256)]) {
				t.Errorf("%s: bytes differ from the change's", e.Loc)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	f.cat.Changes(ctx, "alpha", time.Time{}, base.Add(2*time.Hour), func(r *Record) error {
		uri, _ := f.srv.ResourceURI("alpha", provenance.OriginURI(&r.Upstream))
		want = append(want, r.Op+" "+uri)
		return nil
	})
	if len(got) != len(want) {
		t.Fatalf("packages hold %d changes, the log %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("change %d: package %s, log %s", i, got[i], want[i])
		}
	}
	if deleted == nil || deleted.MD.Path != "" {
		t.Errorf("deletion in the package: %+v", deleted)
	}
}

// TestDumpsSurviveRestart rebuilds nothing after a restart: the same
// documents are served from the state store, and a rebuild of an
// unchanged collection makes the very same package.
func TestDumpsSurviveRestart(t *testing.T) {
	f := newDumpFixture(t, DumpConfig{})
	ctx := context.Background()
	if err := f.dumps.Rebuild(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	_, rd1, before := f.readDump(t, "/alpha/resourcedump.xml")
	_, _, cdBefore := f.readDump(t, "/alpha/changedump.xml")
	f.reopen(t)
	_, _, after := f.readDump(t, "/alpha/resourcedump.xml")
	_, _, cdAfter := f.readDump(t, "/alpha/changedump.xml")
	if !bytes.Equal(before, after) || !bytes.Equal(cdBefore, cdAfter) {
		t.Fatalf("documents differ after a restart:\n%s\n%s", before, after)
	}
	if err := f.dumps.RebuildResourceDump(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	_, rd2, _ := f.readDump(t, "/alpha/resourcedump.xml")
	if rd1[0].Loc != rd2[0].Loc {
		t.Errorf("an unchanged collection gave a different package: %s, then %s", rd1[0].Loc, rd2[0].Loc)
	}
}

// TestResourceDumpCaps cuts the collection into packages of at most two
// bitstreams, all from one snapshot, and the retired packages of the
// previous dump stay served.
func TestResourceDumpCaps(t *testing.T) {
	f := newDumpFixture(t, DumpConfig{MaxEntries: 2})
	ctx := context.Background()
	if err := f.dumps.RebuildResourceDump(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	h, rd, body := f.readDump(t, "/alpha/resourcedump.xml")
	validate(t, "resourcedump.xml", body)
	if len(rd) != 2 {
		t.Fatalf("%d packages of 4 resources at 2 per package, want 2", len(rd))
	}
	n := 0
	for _, e := range rd {
		p := f.openPackage(t, e.Loc, resourcesync.KindResourceDumpManifest)
		n += p.Len()
		if !e.MD.At.Equal(h.MD.At) || !p.Header().MD.Completed.Equal(h.MD.Completed) {
			t.Errorf("package %s: at %s completed %s, dump %s %s", e.Loc, e.MD.At, p.Header().MD.Completed, h.MD.At, h.MD.Completed)
		}
	}
	if n != 4 {
		t.Errorf("packages hold %d bitstreams, want 4", n)
	}
	f.add("alpha", "http://origin.example.com/new.txt", "created", base.Add(125*time.Minute), "new", "text/plain", viaduct.Change{Source: "origin"})
	f.putBlob(t, []byte("new"))
	if err := f.dumps.RebuildResourceDump(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if resp, _ := f.get(t, pathOf(t, rd[0].Loc)); resp.StatusCode != http.StatusOK {
		t.Errorf("retired package: %s", resp.Status)
	}
}
