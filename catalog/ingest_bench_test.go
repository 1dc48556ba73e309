package catalog

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// ingestEvents makes the events of a baseline of n new resources as the
// node's fetch workers publish them: URIs in the Resource List's order but
// shuffled within windows of 16, as concurrent workers finish out of
// order, each with both digests, a length, a type and the Source's
// lastmod, hash and list at. The URIs are laid out as bench/staticsrc
// lays out its files, spread over 256 directories in turn: a Source whose
// list order is not the catalog's byte order (numbered items, sharded
// paths), so that each batch inserts at hundreds of places in every index
// of URIs, as a real baseline does, rather than at their ends.
func ingestEvents(n int) []Applied {
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	for w := 0; w < n; w += 16 {
		win := ids[w:min(w+16, n)]
		rng.Shuffle(len(win), func(i, j int) { win[i], win[j] = win[j], win[i] })
	}
	listed := t0.Add(-time.Minute)
	out := make([]Applied, n)
	for i, id := range ids {
		var seed [8]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(id))
		s, m := sha256.Sum256(seed[:]), md5.Sum(seed[:])
		ev := &viaduct.Event{Source: "s", Collection: "s", URI: fmt.Sprintf("http://127.0.0.1:41234/files/%02x/%07d", id%256, id),
			Op: resourcesync.Created, SHA256: hex.EncodeToString(s[:]), MD5: hex.EncodeToString(m[:]),
			Length: 1024, Type: "application/octet-stream"}
		length := int64(1024)
		ev.Upstream = viaduct.Change{Source: "s", Collection: "s", URI: ev.URI, Op: resourcesync.Created,
			Time: t0.Add(-time.Duration(id) * time.Second), Listed: listed, Length: &length,
			Modified: t0.Add(-time.Duration(id) * time.Second), Type: ev.Type,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: ev.MD5}, {Alg: resourcesync.SHA256, Value: ev.SHA256}}}
		out[i] = Applied{Seq: uint64(i + 1), At: t0.Add(time.Duration(i) * 10 * time.Microsecond), Event: ev}
	}
	return out
}

// BenchmarkApplyIngest measures ApplyBatch on a baseline as the node
// ingests it: events of new resources (see ingestEvents) in batches of 10,
// as the applier wrote a baseline into MinIO before it waited out
// saturated workers, of 50 to 500, as it forms them from a moderate
// stream, of 750 (what
// a bound of half a second, the applier's earlier one, made of a baseline
// at 1,500 a second), of 2,500, as it forms them at a baseline's full
// rate, and of 10,000, as when it catches up (catalog/applier.go). Each b.N
// is one event; the figure that matters is for a catalog of the
// baseline's size.
// KiB-written/event is what the catalog and its WAL wrote to storage,
// KiB-handed/event what SQLite passed to write calls, temporary files
// included (they reach the disk too once anything syncs the file system):
//
//	go test -run '^$' -bench ApplyIngest -benchtime 100000x -count 3 ./catalog
func BenchmarkApplyIngest(b *testing.B) {
	b.Run("batch=10", func(b *testing.B) { benchApplyIngest(b, func() int { return 10 }) })
	b.Run("batch=50-500", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(3, 4))
		benchApplyIngest(b, func() int { return 50 + rng.IntN(451) })
	})
	b.Run("batch=750", func(b *testing.B) { benchApplyIngest(b, func() int { return 750 }) })
	b.Run("batch=2500", func(b *testing.B) { benchApplyIngest(b, func() int { return 2500 }) })
	b.Run("batch=10000", func(b *testing.B) { benchApplyIngest(b, func() int { return 10000 }) })
}

func benchApplyIngest(b *testing.B, batch func() int) {
	// The applier's context can end, as the node's does.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := openTemp(b)
	evs := ingestEvents(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, w0, h0 := testutil.CPUTime(b), testutil.WrittenBytes(b), testutil.HandedBytes(b)
	for i := 0; i < len(evs); {
		n := batch()
		if err := c.ApplyBatch(ctx, evs[i:min(i+n, len(evs))]); err != nil {
			b.Fatal(err)
		}
		i += n
	}
	cpu, written, handed := testutil.CPUTime(b)-cpu0, testutil.WrittenBytes(b)-w0, testutil.HandedBytes(b)-h0
	b.StopTimer()
	b.ReportMetric(float64(written)/1024/float64(b.N), "KiB-written/event")
	b.ReportMetric(float64(handed)/1024/float64(b.N), "KiB-handed/event")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/event")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/event")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	held, _, err := c.CountResources(ctx, "s")
	if err != nil {
		b.Fatal(err)
	}
	if held != b.N {
		b.Fatalf("catalog holds %d resources, want %d", held, b.N)
	}
}
