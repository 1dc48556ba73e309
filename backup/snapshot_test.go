package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// solo is the turn of a node alone.
type solo struct{}

func (solo) Take(ctx context.Context) (context.Context, func(), bool, error) {
	return ctx, func() {}, true, nil
}

// fixture is a catalog that events are applied to, a directory blob
// store, and the snapshots between them.
type fixture struct {
	t     testing.TB
	cat   *catalog.Catalog
	store *dir.Store
	snaps *Snapshots
	seq   uint64
}

func newFixture(t testing.TB, keep int) *fixture {
	t.Helper()
	ctx := context.Background()
	cat, err := catalog.Open(ctx, filepath.Join(t.TempDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cat.Close() })
	store, err := dir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSnapshots(Config{Interval: time.Hour, Keep: keep}, SnapshotDeps{Catalog: cat, Store: store, Turn: solo{}, Spool: t.TempDir(), Node: "n1", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, cat: cat, store: store, snaps: s}
}

// apply applies n creations of resources named after their sequence.
func (f *fixture) apply(n int) {
	f.t.Helper()
	for range n {
		f.seq++
		uri := fmt.Sprintf("http://example.org/r/%d", f.seq)
		ev := &viaduct.Event{Source: "s", Collection: "s", URI: uri, Op: "created",
			SHA256: strings.Repeat("a", 64), MD5: strings.Repeat("b", 32), Length: 10, Type: "text/plain"}
		ev.Upstream.Source, ev.Upstream.Collection, ev.Upstream.URI, ev.Upstream.Op = "s", "s", uri, "created"
		ev.Upstream.Time = time.Unix(1700000000, 0).Add(time.Duration(f.seq) * time.Second)
		if err := f.cat.Apply(context.Background(), f.seq, time.Unix(1700000000, 0).Add(time.Duration(f.seq)*time.Second), ev); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) write() Snapshot {
	f.t.Helper()
	s, err := f.snaps.Write(context.Background())
	if err != nil {
		f.t.Fatalf("writing a snapshot: %v", err)
	}
	return s
}

func (f *fixture) list() Listing {
	f.t.Helper()
	l, err := ListSnapshots(context.Background(), f.store)
	if err != nil {
		f.t.Fatal(err)
	}
	return l
}

// resources counts the resources of collection s in the catalog at path.
func resources(t *testing.T, path string) (int, uint64) {
	t.Helper()
	ctx := context.Background()
	c, err := catalog.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	if err := c.ScanResources(ctx, "s", "", 0, func(*catalog.ResourceState) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	applied, err := c.LastApplied(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n, applied
}

// flip inverts a byte in the middle of the object.
func flip(t *testing.T, store storage.Objects, name string) {
	t.Helper()
	ctx := context.Background()
	r, err := store.GetObject(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	b[len(b)/2] ^= 0xff
	if err := store.PutObject(ctx, name, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotRoundTrip writes a snapshot of a catalog that goes on
// changing, and a catalog fetched from it holds what the catalog held at
// the snapshot's sequence.
func TestSnapshotRoundTrip(t *testing.T) {
	f := newFixture(t, 3)
	f.apply(200)
	s := f.write()
	f.apply(50)
	if s.Seq != 200 || s.Size == 0 || s.Size >= s.CatalogBytes || s.CatalogSchema != catalog.SchemaVersion() {
		t.Fatalf("snapshot %+v: want sequence 200, compressed, at this build's schema", s)
	}
	if _, err := f.snaps.Write(context.Background()); err != nil {
		t.Fatalf("a second snapshot: %v", err)
	}
	if _, err := f.snaps.Write(context.Background()); !errors.Is(err, errNotDue) {
		t.Fatalf("a snapshot with nothing applied since the last: %v, want none written", err)
	}
	dst := filepath.Join(t.TempDir(), "catalog.db")
	if err := FetchSnapshot(context.Background(), f.store, s, dst); err != nil {
		t.Fatal(err)
	}
	if n, applied := resources(t, dst); n != 200 || applied != 200 {
		t.Fatalf("the fetched catalog holds %d resources, applied up to %d; want 200, 200", n, applied)
	}
}

// TestSnapshotRetention keeps the newest Keep snapshots, and removes an
// object whose manifest never came (a write cut short).
func TestSnapshotRetention(t *testing.T) {
	f := newFixture(t, 2)
	var seqs []uint64
	for range 4 {
		f.apply(10)
		seqs = append(seqs, f.write().Seq)
		if i := len(f.list().Snapshots); i > 2 {
			t.Fatalf("%d snapshots kept, keep is 2", i)
		}
	}
	orphan := stem(5, time.Now()) + snapshotData
	if err := f.store.PutObject(context.Background(), orphan, strings.NewReader("cut short"), 9); err != nil {
		t.Fatal(err)
	}
	if l := f.list(); len(l.Orphans) != 1 {
		t.Fatalf("orphans %v, want the one put", l.Orphans)
	}
	f.apply(10)
	seqs = append(seqs, f.write().Seq)
	l := f.list()
	if len(l.Snapshots) != 2 || l.Snapshots[0].Seq != seqs[4] || l.Snapshots[1].Seq != seqs[3] || len(l.Orphans) != 0 {
		t.Fatalf("kept %+v, orphans %v; want sequences %d and %d, no orphan", l.Snapshots, l.Orphans, seqs[4], seqs[3])
	}
	n := 0
	f.store.ListObjects(context.Background(), SnapshotPrefix, func(storage.ObjectInfo) error { n++; return nil })
	if n != 4 {
		t.Fatalf("%d objects under %s, want 2 snapshots of 2 objects", n, SnapshotPrefix)
	}
}

// TestSnapshotDamaged: a flipped byte in the object, a manifest that is
// not JSON, and one that lies about the catalog's sequence are all found,
// and nothing is left where the catalog was to go.
func TestSnapshotDamaged(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 3)
	f.apply(100)
	s := f.write()
	dst := filepath.Join(t.TempDir(), "catalog.db")

	flip(t, f.store, s.Object)
	err := FetchSnapshot(ctx, f.store, s, dst)
	if !errors.Is(err, ErrSnapshotDamaged) || !strings.Contains(err.Error(), "sha-256") {
		t.Fatalf("fetching a damaged snapshot: %v, want ErrSnapshotDamaged naming the sha-256", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a damaged snapshot left %s", dst)
	}
	if left, _ := filepath.Glob(dst + "*"); len(left) > 0 {
		t.Fatalf("a damaged snapshot left %v", left)
	}

	f.apply(10)
	lying := f.write()
	lying.Seq--
	lying.Object = stem(lying.Seq, lying.Taken) + snapshotData
	good := f.list().Snapshots[0]
	copyObject(t, f.store, good.Object, lying.Object)
	if err := FetchSnapshot(ctx, f.store, lying, dst); !errors.Is(err, ErrSnapshotDamaged) || !strings.Contains(err.Error(), "sequence") {
		t.Fatalf("fetching a snapshot whose catalog is not at its manifest's sequence: %v", err)
	}

	if err := f.store.PutObject(ctx, manifestName(good.Object), strings.NewReader("{not json"), 9); err != nil {
		t.Fatal(err)
	}
	if l := f.list(); len(l.Problems) != 1 || len(l.Snapshots) != 1 {
		t.Fatalf("a manifest that is not JSON: problems %v, snapshots %d", l.Problems, len(l.Snapshots))
	}
}

func copyObject(t *testing.T, store storage.Objects, from, to string) {
	t.Helper()
	r, err := store.GetObject(context.Background(), from)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if err := store.PutObject(context.Background(), to, bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// TestJoin decides what a node starts on from its catalog, EVENTS' range
// and the snapshots in the store.
func TestJoin(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 5)
	f.apply(100)
	old := f.write()
	f.apply(100)
	s := f.write() // at 200
	path := func() string { return filepath.Join(t.TempDir(), "catalog.db") }

	j, err := Join(ctx, JoinState{CatalogPath: path(), Have: true, Applied: 150, Events: Events{First: 151, Last: 300},
		Release: func() error { t.Error("a kept catalog was released"); return nil }}, f.store, nil)
	if err != nil || j.From != "catalog" {
		t.Fatalf("a catalog EVENTS can bring up to date: %+v, %v; want it kept", j, err)
	}
	p := path()
	j, err = Join(ctx, JoinState{CatalogPath: p, Events: Events{First: 201, Last: 300}}, f.store, nil)
	if err != nil || j.From != "snapshot" || j.Snapshot.Seq != 200 {
		t.Fatalf("a new node, EVENTS from 201: %+v, %v; want the snapshot at 200", j, err)
	}
	if n, applied := resources(t, p); n != 200 || applied != 200 {
		t.Fatalf("the catalog put in place holds %d resources at %d", n, applied)
	}
	p = path()
	os.WriteFile(p, []byte("a catalog left behind"), 0o600)
	released := 0
	release := func() error { released++; return nil }
	j, err = Join(ctx, JoinState{CatalogPath: p, Have: true, Applied: 50, Events: Events{First: 120, Last: 300}, Release: release}, f.store, nil)
	if err != nil || j.From != "snapshot" || j.Snapshot.Seq != 200 {
		t.Fatalf("a catalog at 50, EVENTS from 120: %+v, %v; want the snapshot at 200", j, err)
	}
	if released != 1 {
		t.Fatalf("the open catalog a snapshot replaced was released %d times, want once", released)
	}
	_, err = Join(ctx, JoinState{CatalogPath: path(), Events: Events{First: 202, Last: 300}}, f.store, nil)
	if !errors.Is(err, ErrCannotJoin) || !strings.Contains(err.Error(), "too old") || !strings.Contains(err.Error(), "starts at sequence 202") {
		t.Fatalf("every snapshot too old: %v", err)
	}
	j, err = Join(ctx, JoinState{CatalogPath: path(), Events: Events{First: 1, Last: 150}}, f.store, nil)
	if err != nil || j.From != "snapshot" || j.Snapshot.Seq != old.Seq || len(j.Skipped) != 1 {
		t.Fatalf("a snapshot past EVENTS' end: %+v, %v; want it skipped for the older one", j, err)
	}

	flip(t, f.store, s.Object)
	flip(t, f.store, old.Object)
	_, err = Join(ctx, JoinState{CatalogPath: path(), Events: Events{First: 150, Last: 300}}, f.store, nil)
	if !errors.Is(err, ErrCannotJoin) || !strings.Contains(err.Error(), s.Object) {
		t.Fatalf("the only usable snapshot damaged: %v", err)
	}
	j, err = Join(ctx, JoinState{CatalogPath: path(), Events: Events{First: 1, Last: 300}}, f.store, nil)
	if err != nil || j.From != "replay" || len(j.Skipped) != 2 {
		t.Fatalf("snapshots damaged, EVENTS whole: %+v, %v; want a replay", j, err)
	}
	empty, err := dir.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Join(ctx, JoinState{CatalogPath: path(), Events: Events{First: 2, Last: 300}}, empty, nil)
	if !errors.Is(err, ErrCannotJoin) || !strings.Contains(err.Error(), "holds no catalog snapshot") {
		t.Fatalf("no snapshot, EVENTS cut: %v", err)
	}
}

// TestCheckRetention refuses an EVENTS retention the schedule does not
// cover, and any with snapshots off, but for 0.
func TestCheckRetention(t *testing.T) {
	on, off := Defaults(), Config{}
	for _, c := range []struct {
		cfg    Config
		maxAge time.Duration
		ok     bool
	}{
		{on, 0, true}, {on, 7 * 24 * time.Hour, true}, {on, 24 * time.Hour, true},
		{on, 23 * time.Hour, false}, {on, time.Hour, false},
		{off, 0, true}, {off, 7 * 24 * time.Hour, false},
	} {
		if err := c.cfg.CheckRetention(c.maxAge); (err == nil) != c.ok {
			t.Errorf("interval %s, events_max_age %s: %v", c.cfg.Interval, c.maxAge, err)
		}
	}
}

// held is the turn of a node whose lease another node holds.
type held struct{}

func (held) Take(ctx context.Context) (context.Context, func(), bool, error) {
	return nil, nil, false, nil
}

// TestSnapshotSchedule: the schedule writes a snapshot once the newest
// is an interval old, only on the node holding the turn, and every
// node's metrics follow the newest in the store.
func TestSnapshotSchedule(t *testing.T) {
	f := newFixture(t, 2)
	f.snaps.cfg.Interval = time.Second
	other, err := NewSnapshots(Config{Interval: time.Second, Keep: 2}, SnapshotDeps{Catalog: f.cat, Store: f.store, Turn: held{}, Spool: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.apply(10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- f.snaps.Run(ctx) }()
	go func() { done <- other.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		<-done
	}()
	testutil.Eventually(t, time.Minute, "a first snapshot", func() bool {
		l := f.list()
		return len(l.Snapshots) == 1 && l.Snapshots[0].Seq == 10
	})
	f.apply(5)
	testutil.Eventually(t, time.Minute, "a second snapshot, an interval later", func() bool {
		l := f.list()
		return len(l.Snapshots) == 2 && l.Snapshots[0].Seq == 15
	})
	testutil.Eventually(t, time.Minute, "the other node's metrics to show the newest", func() bool {
		return value(other.m.seq) == 15 && value(other.m.writes) == 0
	})
	if value(f.snaps.m.writes) != 2 || value(f.snaps.m.bytes) == 0 {
		t.Fatalf("the writing node counts %v writes, %v bytes", value(f.snaps.m.writes), value(f.snaps.m.bytes))
	}
}

// value reads a gauge or a counter.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		return -1
	}
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}
