package fixity

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// runAudit runs a until its first complete pass and stops it.
func runAudit(t *testing.T, a *Audit) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	testutil.Eventually(t, time.Minute, "a complete pass", func() bool { return !a.Status().LastPass.IsZero() })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestAuditQuarantinesAndAsksRepair: in each real store, a blob whose
// bytes were changed behind the store's back and a blob that went
// missing are found and counted; the bad one is moved out from under its
// key (never served again) with its bytes kept, and a repair change is
// queued for every resource whose copy either was, the resource sharing
// the bad bytes included.
func TestAuditQuarantinesAndAsksRepair(t *testing.T) {
	for _, mk := range stores(t) {
		s := mk(t)
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			cat := openCatalog(t)
			var hs []held
			for i, n := range []int{2000, 3000, 1500, 100 << 10} {
				hs = append(hs, hold(t, s.blobs, cat, uint64(i+1), "http://src.example/r"+string(rune('a'+i)), body(i, n)))
			}
			twin := hold(t, s.blobs, cat, 5, "http://src.example/twin", hs[0].body)
			bad := slices.Clone(hs[0].body)
			bad[len(bad)/2] ^= 0x01 // one bit flipped
			s.corrupt(t, hs[0].sha256, bad)
			s.remove(t, hs[2].sha256)

			q := &queued{}
			a, err := New(Config{BytesPerSecond: 1 << 30, BlobsPerSecond: 1 << 30, Every: time.Hour},
				Deps{Catalog: cat, Blobs: s.blobs, Quarantine: s.blobs, Changes: q, Sources: []string{"s"}, Registerer: prometheus.NewRegistry()})
			if err != nil {
				t.Fatal(err)
			}
			runAudit(t, a)

			if ok, b, m := checked(a, resultOK), checked(a, resultBad), checked(a, resultMissing); ok != 2 || b != 1 || m != 1 {
				t.Errorf("checked ok/bad/missing = %d/%d/%d; want 2/1/1 (the twin shares the bad blob, read once)", ok, b, m)
			}
			if _, err := s.blobs.Open(ctx, hs[0].sha256); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("the bad blob is still served under its key: open = %v", err)
			}
			if got := s.quarantined(t, hs[0].sha256); !bytes.Equal(got, bad) {
				t.Errorf("quarantine kept %d bytes that are not the bad copy", len(got))
			}
			var got []string
			for _, c := range q.all() {
				got = append(got, c.URI+" "+c.Repair)
				if c.Op != resourcesync.Updated || c.Source != "s" || c.Collection != "c" || c.Hash.Get(resourcesync.SHA256) != c.Repair || c.Length == nil {
					t.Errorf("repair change %+v does not carry what the Source declared", c)
				}
			}
			slices.Sort(got)
			want := []string{hs[0].uri + " " + hs[0].sha256, hs[2].uri + " " + hs[2].sha256, twin.uri + " " + hs[0].sha256}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("repair changes queued:\n%v\nwant:\n%v", got, want)
			}
			if n := value(a.m.repairs); n != 3 {
				t.Errorf("repairs_requested_total = %v; want 3", n)
			}
			if st := a.Status(); st.Bad != 2 || st.RepairsPending != 2 || !st.Enabled {
				t.Errorf("status = %+v; want 2 bad, 2 repairs pending", st)
			}
			if n := value(a.m.bytes); n != float64(2000+3000+100<<10) {
				t.Errorf("bytes_read_total = %v; want the three blobs still there, once each", n)
			}
		})
	}
}

// TestAuditKeepsItsPace: on a virtual clock, which only the audit's own
// waits move, a pass over 4,000 KiB at 1 MiB/s takes about four seconds
// of it: at least the bytes over the rate, less one read's worth the
// budget may lend, and not much more.
func TestAuditKeepsItsPace(t *testing.T) {
	s := dirStore(t, 0)
	cat := openCatalog(t)
	const blobs, size, rate = 40, 100 << 10, 1 << 20
	for i := range blobs {
		hold(t, s.blobs, cat, uint64(i+1), "http://src.example/"+string(rune('A'+i)), body(i, size))
	}
	clock := &virtualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), hold: time.Hour}
	a, err := New(Config{BytesPerSecond: rate, BlobsPerSecond: 1 << 30, Every: 24 * time.Hour},
		Deps{Catalog: cat, Blobs: s.blobs, Quarantine: s.blobs, Changes: &queued{}, Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	runAudit(t, a)
	st := a.Status()
	took := st.LastPass.Sub(st.PassStarted).Seconds()
	total := float64(blobs * size)
	if least, most := (total-readChunk)/rate, total/rate+1; took < least || took > most {
		t.Errorf("a pass over %.0f bytes at %d B/s took %.2fs of the audit's clock; want between %.2fs and %.2fs", total, rate, took, least, most)
	}
	if n := value(a.m.bytes); n != total {
		t.Errorf("bytes_read_total = %v; want %v", n, total)
	}
}

// TestAuditResumesAfterRestart: an audit stopped in the middle of a pass
// starts again from its saved cursor, not from the beginning, and the
// two runs together leave no resource unchecked.
func TestAuditResumesAfterRestart(t *testing.T) {
	s := dirStore(t, dir64k)
	cat := openCatalog(t)
	const n, size, rate = 600, 4 << 10, 16 << 10 // a page of 256 takes 64 s of the clock
	for i := range n {
		hold(t, s.blobs, cat, uint64(i+1), "http://src.example/"+pad(i), body(i, size))
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// The process stops 100 s into the pass, in its second page (or after
	// a minute, if the pass never waits).
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	first := &virtualClock{now: start, hold: time.Hour, at: func(now time.Time) {
		if now.Sub(start) > 100*time.Second {
			stop()
		}
	}}
	a1, err := New(Config{BytesPerSecond: rate, BlobsPerSecond: 1 << 30, Every: 24 * time.Hour},
		Deps{Catalog: cat, Blobs: s.blobs, Quarantine: s.blobs, Changes: &queued{}, Now: first.Now, Sleep: first.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	if err := a1.Run(ctx); err != nil {
		t.Fatal(err)
	}
	ok1 := checked(a1, resultOK)
	if !a1.Status().LastPass.IsZero() || ok1 == 0 || ok1 >= n {
		t.Fatalf("the first run checked %d of %d and completed at %v; want it stopped in the middle of its pass", ok1, n, a1.Status().LastPass)
	}

	second := &virtualClock{now: first.Now(), hold: time.Hour}
	a2, err := New(Config{BytesPerSecond: rate, BlobsPerSecond: 1 << 30, Every: 24 * time.Hour},
		Deps{Catalog: cat, Blobs: s.blobs, Quarantine: s.blobs, Changes: &queued{}, Now: second.Now, Sleep: second.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	runAudit(t, a2)
	ok2 := checked(a2, resultOK)
	if ok2 >= n || ok1+ok2 < n {
		t.Errorf("after a restart the pass checked %d more (%d before); want it to resume where it stopped, and to leave none of %d out", ok2, ok1, n)
	}
	if st := a2.Status(); !st.PassStarted.Equal(start) {
		t.Errorf("the resumed pass started at %v; want the first run's start %v", st.PassStarted, start)
	}
}

// TestAuditKeepsItsBlobPace: small blobs are held to the budget of
// blobs a second, whatever the budget of bytes: 100 blobs at 10 a second
// take about ten seconds of the audit's clock.
func TestAuditKeepsItsBlobPace(t *testing.T) {
	s := dirStore(t, dir64k)
	cat := openCatalog(t)
	const blobs, rate = 100, 10
	for i := range blobs {
		hold(t, s.blobs, cat, uint64(i+1), "http://src.example/"+pad(i), body(i, 100))
	}
	clock := &virtualClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), hold: time.Hour}
	a, err := New(Config{BytesPerSecond: 1 << 30, BlobsPerSecond: rate, Every: 24 * time.Hour},
		Deps{Catalog: cat, Blobs: s.blobs, Quarantine: s.blobs, Changes: &queued{}, Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	runAudit(t, a)
	st := a.Status()
	took := st.LastPass.Sub(st.PassStarted).Seconds()
	if least, most := float64(blobs-1)/rate, float64(blobs)/rate+1; took < least || took > most {
		t.Errorf("a pass over %d blobs at %d a second took %.2fs of the audit's clock; want between %.2fs and %.2fs", blobs, rate, took, least, most)
	}
}

// dir64k packs every blob of the resume test.
const dir64k = 64 << 10

// pad is i as six digits, so that URIs sort as numbers.
func pad(i int) string {
	b := []byte("000000")
	for j := 5; i > 0; j-- {
		b[j] = byte('0' + i%10)
		i /= 10
	}
	return string(b)
}
