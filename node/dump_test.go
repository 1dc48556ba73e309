package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil/dumptest"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
)

// dumpSource is a loopback Source polled only when a test asks, reading
// Dumps or not.
func dumpSource(name string, srv *sim.Server, preferDumps bool) harvester.SourceConfig {
	sc := sourceConfig(name, srv)
	sc.PreferDumps = &preferDumps
	return sc
}

// requests is how many requests the Source has answered since its counts
// were last reset.
func requests(srv *sim.Server) int {
	n := 0
	for _, c := range srv.Requests() {
		n += c
	}
	return n
}

// TestDumpBaselineMatchesList baselines one Source twice, on two nodes:
// from its Resource List and from its Resource Dump. Both catalogs are
// exact copies of the Source (URIs, sha-256, md5, lengths); the Dump took
// a handful of requests where the list took one per resource.
func TestDumpBaselineMatchesList(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 1000, Seed: 11, MinSize: 16, MaxSize: 2048, PartSize: 250, Dumps: true})

	src.ResetRequests()
	list := startNode(t, testConfig(t.TempDir(), dumpSource("s", src, false)), nil)
	mustSync(t, list, "s")
	waitSettled(t, list, 60*time.Second)
	checkMirror(t, list, "s", src)
	byList := requests(src)

	src.ResetRequests()
	var logs logBuffer
	dumped := startNode(t, testConfig(t.TempDir(), dumpSource("s", src, true)), logs.logger())
	mustSync(t, dumped, "s")
	waitSettled(t, dumped, 60*time.Second)
	checkMirror(t, dumped, "s", src)
	checkBlobs(t, dumped)
	byDump := requests(src)
	if r := src.Requests(); r["/resourcedump-4.zip"] != 1 || r[sim.PathResourceList] != 0 {
		t.Fatalf("requests of the Dump baseline: %v", r)
	}
	t.Logf("baseline of 1,000 resources: %d requests from the Resource List, %d from the Resource Dump", byList, byDump)
	if byDump > 20 || byList < 1000 {
		t.Fatalf("requests: %d from the Resource Dump, %d from the Resource List", byDump, byList)
	}
	if rec := logs.records(map[string]string{"msg": "change handled without fetching", "reason": "stored_from_dump"}); len(rec) != 1000 {
		t.Fatalf("%d changes published from stored blobs, want 1000", len(rec))
	}
	if dl := deadLetters(t, dumped); len(dl) != 0 {
		t.Fatalf("%d dead letters, first: %s %v", len(dl), dl[0].Reason, dl[0].Evidence)
	}
}

// TestChangeDumpCatchUp baselines from the Resource Dump, then catches up
// after mutations in two periods: the closed one from its Change Dump
// package, the open one from the Change List. The catalog equals the
// Source.
func TestChangeDumpCatchUp(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().Add(-48 * time.Hour).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	src := startSource(t, sim.Config{Resources: 500, Seed: 12, MinSize: 16, MaxSize: 1024, Period: time.Hour, Dumps: true, Now: clock})
	n := startNode(t, testConfig(t.TempDir(), dumpSource("s", src, true)), nil)
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	checkMirror(t, n, "s", src)

	now.Add(int64(5 * time.Minute))
	src.Create(40)
	src.Update(60)
	src.Delete(30)
	src.Mutate(40)
	now.Add(int64(2 * time.Hour)) // the period of those changes closes
	src.Mutate(20)
	src.ResetRequests()
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)
	checkMirror(t, n, "s", src)
	checkBlobs(t, n)
	if r := src.Requests(); r["/changedump-0.zip"] != 1 {
		t.Fatalf("requests of the catch-up: %v", r)
	}
	if dl := deadLetters(t, n); len(dl) != 0 {
		t.Fatalf("%d dead letters, first: %s %v", len(dl), dl[0].Reason, dl[0].Evidence)
	}
}

// TestHostileDumpPackage serves a crafted package (a sound manifest for a
// resource the Source never had, plus an entry named ../evil): it is
// refused with an error naming the Source, the package and the entry,
// nothing of it is stored or catalogued, and the baseline comes from the
// Resource List instead.
func TestHostileDumpPackage(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 300, Seed: 13, MinSize: 16, MaxSize: 1024, PartSize: 100, Dumps: true})
	planted := src.URL + "/res/9999"
	body := []byte("planted bitstream")
	src.OverridePackage("/resourcedump-2.zip", dumptest.HostilePackage(t, planted, "/resources/planted", body))
	var logs logBuffer
	n := startNode(t, testConfig(t.TempDir(), dumpSource("s", src, true)), logs.logger())
	mustSync(t, n, "s")
	waitSettled(t, n, 30*time.Second)

	rec := logs.records(map[string]string{"msg": "Resource Dump not used", "err": src.URL + "/resourcedump-2.zip"})
	if len(rec) != 1 {
		t.Fatalf("%d log records of the refusal, want 1", len(rec))
	}
	msg, _ := rec[0]["err"].(string)
	for _, want := range []string{"source s", `entry "../evil"`, "escapes the package"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("refusal %q does not say %q", msg, want)
		}
	}
	ctx := context.Background()
	if _, err := n.Catalog().Resource(ctx, "s", planted); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("the planted resource is in the catalog: %v", err)
	}
	sum := sha256.Sum256(body)
	if _, err := n.Blobs().Stat(ctx, hex.EncodeToString(sum[:])); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the planted bitstream is in the blob store: %v", err)
	}
	checkMirror(t, n, "s", src)
}
