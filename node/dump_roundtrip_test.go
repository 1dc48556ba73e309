package node

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/resourcesync/dump"
	"github.com/viaduct-mirror/viaduct/sim"
)

// dumpConfig turns a node's Dumps on, rebuilt only when a test asks, with
// Change List periods of one second so that periods close within a test.
func dumpConfig(cfg *Config) {
	cfg.Republish.ChangeListPeriod = time.Second
	cfg.Republish.Dumps = republish.DumpConfig{Enabled: true, Schedule: "@every 1h", CheckEvery: time.Hour}
}

// rebuildDumps asks the node to rebuild a collection's Dumps now.
func rebuildDumps(t testing.TB, n *Node, coll string) {
	t.Helper()
	resp, err := http.Post(n.AdminURL()+"/admin/dumps/"+coll+"?wait=true", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("rebuild dumps of %s: %s %s", coll, resp.Status, b)
	}
}

// getValid fetches a ResourceSync document, checks that the validator
// finds no error in it, and reads it.
func getValid(t testing.TB, uri string) (*resourcesync.Header, []*resourcesync.Entry) {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", uri, resp.Status, err)
	}
	rep, err := resourcesync.Validate(bytes.NewReader(body), resourcesync.DefaultLimits(), resourcesync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors > 0 {
		t.Fatalf("%s: %d validation errors: %v", uri, rep.Errors, rep.Problems)
	}
	r, err := resourcesync.NewReader(bytes.NewReader(body), resourcesync.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	var es []*resourcesync.Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return r.Header(), es
		}
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		es = append(es, e)
	}
}

// capabilityOf finds the document of capability c in a Capability List.
func capabilityOf(t testing.TB, es []*resourcesync.Entry, c string) string {
	t.Helper()
	for _, e := range es {
		if e.MD != nil && e.MD.Capability == c {
			return e.Loc
		}
	}
	t.Fatalf("the Capability List lists no %s", c)
	return ""
}

// readPackages downloads every package a Dump lists, checks each whole
// (every bitstream verifies) and hands its entries over in order, with
// the package's manifest header; it also validates the manifest copies.
func readPackages(t testing.TB, es []*resourcesync.Entry, want resourcesync.Kind, fn func(h *resourcesync.Header, e *resourcesync.Entry, data []byte)) {
	t.Helper()
	ctx := context.Background()
	for _, pe := range es {
		if len(pe.Links) == 0 || pe.Links[0].Rel != "contents" {
			t.Fatalf("%s has no manifest copy", pe.Loc)
		}
		getValid(t, pe.Links[0].Href)
		resp, err := http.Get(pe.Loc)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "package.zip")
		f, _ := os.Create(path)
		_, err = io.Copy(f, resp.Body)
		resp.Body.Close()
		f.Close()
		if err != nil || resp.Header.Get("Content-Type") != "application/zip" {
			t.Fatalf("GET %s: %v, %s", pe.Loc, err, resp.Header.Get("Content-Type"))
		}
		p, err := dump.Open(path, dump.Options{Name: pe.Loc, Want: want})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check(ctx); err != nil {
			t.Fatal(err)
		}
		err = p.Entries(ctx, func(e *resourcesync.Entry, body *dump.Body) error {
			var data []byte
			if body != nil {
				if data, err = io.ReadAll(body); err != nil {
					return err
				}
			}
			fn(p.Header(), e, data)
			return nil
		})
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// originOf is the origin URI an entry's via link names.
func originOf(t testing.TB, e *resourcesync.Entry) string {
	t.Helper()
	for _, l := range e.Links {
		if l.Rel == "via" {
			return l.Href
		}
	}
	t.Fatalf("%s has no via link", e.Loc)
	return ""
}

// TestDumpPackagesRoundTrip reads node A's Resource Dump and Change Dump
// package by package, as a Destination would (every document and manifest
// copy valid, every package checked whole), takes a baseline from the
// first and applies the changes of the second after its at, and checks
// that the result is the Source as A harvested it: every resource with
// its bytes, nothing deleted left over.
func TestDumpPackagesRoundTrip(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 300, Seed: 11, MinSize: 16, MaxSize: 2048})
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	dumpConfig(&cfg)
	a := startNode(t, cfg, nil)
	mustSync(t, a, "s")
	waitSettled(t, a, 60*time.Second)
	rebuildDumps(t, a, "s")

	_, caps := getValid(t, a.URL()+"/s/capabilitylist.xml")
	rdURI := capabilityOf(t, caps, "resourcedump")
	cdURI := capabilityOf(t, caps, "changedump")
	rdh, rd := getValid(t, rdURI)
	held := map[string]string{} // origin URI -> sha-256
	readPackages(t, rd, resourcesync.KindResourceDumpManifest, func(h *resourcesync.Header, e *resourcesync.Entry, data []byte) {
		if !h.MD.At.Equal(rdh.MD.At) {
			t.Errorf("package at %s, Resource Dump at %s", h.MD.At, rdh.MD.At)
		}
		held[originOf(t, e)] = e.MD.Hash.Get(resourcesync.SHA256)
	})
	checkAgainst(t, "the Resource Dump", held, src.Snapshot())

	src.Create(40)
	src.Update(60)
	src.Delete(30)
	mustSync(t, a, "s")
	waitSettled(t, a, 30*time.Second)
	want := src.Snapshot()
	// One more change, in a later period, closes the period of the last.
	last := lastChange(t, a, "s")
	waitFor(t, 5*time.Second, "the next Change List period", func() bool { return time.Now().After(last.Truncate(time.Second).Add(time.Second)) })
	src.Create(1)
	mustSync(t, a, "s")
	waitSettled(t, a, 30*time.Second)
	rebuildDumps(t, a, "s")

	cdh, cd := getValid(t, cdURI)
	if len(cd) == 0 || cdh.MD.From.After(rdh.MD.At) {
		t.Fatalf("Change Dump from %s with %d packages does not reach back to the Resource Dump at %s", cdh.MD.From, len(cd), rdh.MD.At)
	}
	applied := 0
	var prev time.Time
	readPackages(t, cd, resourcesync.KindChangeDumpManifest, func(h *resourcesync.Header, e *resourcesync.Entry, data []byte) {
		at := e.ChangeTime()
		if at.Before(prev) {
			t.Errorf("change of %s at %s after one at %s", e.Loc, at, prev)
		}
		prev = at
		if !at.After(rdh.MD.At) {
			return // already in the baseline
		}
		applied++
		if e.MD.Change == resourcesync.Deleted {
			delete(held, originOf(t, e))
			return
		}
		held[originOf(t, e)] = e.MD.Hash.Get(resourcesync.SHA256)
	})
	if applied == 0 {
		t.Fatal("the Change Dump held no change after the Resource Dump")
	}
	if !prev.Before(last.Add(time.Nanosecond)) {
		t.Errorf("the Change Dump reaches %s, past the last change %s before the period was closed", prev, last)
	}
	checkAgainst(t, "the Resource Dump and the Change Dump", held, want)
}

// lastChange is the time of the collection's last change in a node's
// catalog.
func lastChange(t testing.TB, n *Node, coll string) time.Time {
	t.Helper()
	st, err := republish.FromSQLite(n.Catalog()).Stats(context.Background(), coll)
	if err != nil {
		t.Fatal(err)
	}
	return st.Last
}

// checkAgainst compares resources (origin URI -> sha-256) with a Source's
// snapshot.
func checkAgainst(t testing.TB, what string, got map[string]string, snap map[string]sim.Item) {
	t.Helper()
	n := 0
	for uri, it := range snap {
		if it.Deleted {
			if _, ok := got[uri]; ok {
				t.Errorf("%s holds %s, deleted at the Source", what, uri)
			}
			continue
		}
		n++
		if got[uri] != it.SHA256 {
			t.Errorf("%s has %s as %q, the Source as %s", what, uri, got[uri], it.SHA256)
		}
	}
	if len(got) != n {
		t.Errorf("%s holds %d resources, the Source %d", what, len(got), n)
	}
	if t.Failed() {
		var uris []string
		for u := range got {
			uris = append(uris, u)
		}
		t.Fatalf("first few held: %s", strings.Join(uris[:min(3, len(uris))], " "))
	}
}
