package harvester

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/dumptest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// dumpHarvester builds a Harvester over e that may read Dumps into a
// directory blob store, logging to log.
func (e *env) dumpHarvester(cfg Config, log *slog.Logger, sources ...SourceConfig) (*Harvester, storage.Blobs) {
	e.t.Helper()
	blobs, err := dir.New(e.t.TempDir())
	if err != nil {
		e.t.Fatalf("blob store: %v", err)
	}
	h, err := New(cfg, sources, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.pub,
		Blobs: blobs, SpoolDir: e.t.TempDir()}, log, prometheus.NewRegistry())
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { h.Close() })
	return h, blobs
}

// checkStored fails unless c carries a blob that is in blobs with the
// Source's sha-256, md5 and length for c's URI.
func checkStored(t *testing.T, blobs storage.Blobs, c *viaduct.Change, it sim.Item) {
	t.Helper()
	if c.Blob == nil {
		t.Fatalf("change of %s carries no stored blob", c.URI)
	}
	if c.Blob.SHA256 != it.SHA256 || c.Blob.MD5 != it.MD5 || c.Blob.Length != it.Length {
		t.Fatalf("change of %s: blob %+v, Source has %s %s %d", c.URI, *c.Blob, it.SHA256, it.MD5, it.Length)
	}
	info, err := blobs.Stat(context.Background(), c.Blob.SHA256)
	if err != nil || info.Size != it.Length {
		t.Fatalf("blob of %s: %+v, %v", c.URI, info, err)
	}
}

// TestDumpBaseline takes a baseline from a Resource Dump of three
// packages: every resource is queued once with its verified blob already
// stored, no bitstream and no Resource List is requested.
func TestDumpBaseline(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 300, Seed: 5, PartSize: 100, Dumps: true, MinSize: 10, MaxSize: 2000})
	h, blobs := e.dumpHarvester(Defaults(), nil, simSource("s", srv))
	srv.ResetRequests()
	sync1(t, h, "s")
	got := e.drain()
	snap := srv.Snapshot()
	if len(got) != len(snap) {
		t.Fatalf("queued %d changes, want %d", len(got), len(snap))
	}
	seen := map[string]bool{}
	for _, c := range got {
		if c.Op != resourcesync.Created || seen[c.URI] || !strings.HasSuffix(c.Doc, ".zip") {
			t.Fatalf("change %s %s from %s (seen before: %v)", c.Op, c.URI, c.Doc, seen[c.URI])
		}
		seen[c.URI] = true
		checkStored(t, blobs, c, snap[c.URI])
	}
	req := srv.Requests()
	for p, n := range req {
		if strings.HasPrefix(p, "/res/") || p == sim.PathResourceList {
			t.Fatalf("a Dump baseline requested %s %d times", p, n)
		}
	}
	for _, p := range []string{"/resourcedump-1.zip", "/resourcedump-2.zip", "/resourcedump-3.zip"} {
		if req[p] != 1 {
			t.Fatalf("%s requested %d times, want 1 (all: %v)", p, req[p], req)
		}
	}
	e.apply(got)

	// A second pass follows the Change Lists; a scheduled baseline would
	// use the Resource List, which finds nothing to queue.
	sync1(t, h, "s")
	if got := e.drain(); len(got) != 0 {
		t.Fatalf("second pass queued %d changes", len(got))
	}
}

// TestDumpHostilePackage serves a package with an entry that would
// escape the package: it is refused with an error naming the Source, the
// package and the entry, none of its bitstreams is stored, and the pass
// takes its baseline from the Resource List instead.
func TestDumpHostilePackage(t *testing.T) {
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 200, Seed: 9, PartSize: 100, Dumps: true})
	srv.OverridePackage("/resourcedump-2.zip", dumptest.HostilePackage(t, srv.URL+"/res/150", "/resources/a", []byte("a bitstream")))
	var logs testutil.Buffer
	h, blobs := e.dumpHarvester(Defaults(), slog.New(slog.NewJSONHandler(&logs, nil)), simSource("s", srv))
	sync1(t, h, "s")
	if n := counter(t, h, "errors", "s", kindDump); n != 1 {
		t.Fatalf("dump errors counted: %v, want 1", n)
	}
	msg := logs.String()
	for _, want := range []string{"source s", srv.URL + "/resourcedump-2.zip", `\"../evil\"`, "Resource List instead"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("log does not say %q:\n%s", want, msg)
		}
	}
	got := e.drain()
	snap := srv.Snapshot()
	listed := map[string]bool{}
	for _, c := range got {
		listed[c.URI] = true
		id := c.URI[strings.LastIndex(c.URI, "/")+1:]
		if c.Blob != nil && len(id) == 3 && id > "100" {
			t.Fatalf("%s, in the refused package, was queued with a stored blob", c.URI)
		}
	}
	if len(listed) != len(snap) {
		t.Fatalf("%d resources queued after falling back, want %d", len(listed), len(snap))
	}
	evil := sha256.Sum256([]byte("evil"))
	if _, err := blobs.Stat(context.Background(), hex.EncodeToString(evil[:])); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a bitstream of the refused package is in the blob store: %v", err)
	}
	for uri, it := range snap {
		id := uri[strings.LastIndex(uri, "/")+1:]
		if len(id) == 3 && id > "100" {
			if _, err := blobs.Stat(context.Background(), it.SHA256); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("%s, in the refused package, is in the blob store: %v", uri, err)
			}
		}
	}
}

// TestChangeDumpCatchUp follows a Source's Change Dump: the changes of a
// closed period come from its package, with their blobs stored, those of
// the open period from the Change List, and together they are exactly the
// Source's changes, in order.
func TestChangeDumpCatchUp(t *testing.T) {
	var now atomic.Int64
	start := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	now.Store(start.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: 100, Seed: 4, Dumps: true, Period: time.Hour, Now: clock})
	h, blobs := e.dumpHarvester(Defaults(), nil, simSource("s", srv))
	sync1(t, h, "s")
	e.apply(e.drain())

	var muts []sim.Change // of period 0
	now.Add(int64(10 * time.Minute))
	muts = append(muts, srv.Create(5)...)
	muts = append(muts, srv.Mutate(30)...)
	muts = append(muts, srv.Delete(5)...)
	// Changes are coalesced within a package or a list, not across them.
	want := expected(muts)
	closed := len(want)
	now.Add(int64(time.Hour)) // period 0 closes
	want = append(want, expected(srv.Mutate(10))...)
	srv.ResetRequests()
	sync1(t, h, "s")
	got := e.drain()
	assertChanges(t, got, want)
	fromDump := 0
	for _, c := range got {
		if strings.HasSuffix(c.Doc, ".zip") {
			fromDump++
			if c.Op != resourcesync.Deleted {
				checkStored(t, blobs, c, sim.Item{SHA256: c.Hash.Get(resourcesync.SHA256), MD5: c.Hash.Get(resourcesync.MD5), Length: *c.Length})
			}
		}
	}
	if fromDump != closed {
		t.Fatalf("%d changes came from the Change Dump, want %d", fromDump, closed)
	}
	req := srv.Requests()
	if req["/changedump-0.zip"] != 1 || req["/changedump-1.zip"] != 0 {
		t.Fatalf("package requests: %v", req)
	}
	e.apply(got)

	// The closed package is not downloaded again.
	srv.ResetRequests()
	sync1(t, h, "s")
	if got := e.drain(); len(got) != 0 {
		t.Fatalf("a pass with nothing new queued %d changes", len(got))
	}
	if n := srv.Requests()["/changedump-0.zip"]; n != 0 {
		t.Fatalf("processed package downloaded again %d times", n)
	}
}
