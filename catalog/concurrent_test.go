package catalog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadersDuringWrites runs readers while the writer applies events:
// under WAL no read waits for or fails on the writer, and every read sees
// a consistent snapshot.
func TestReadersDuringWrites(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := openTemp(t)
	const total = 2000
	var (
		wg        sync.WaitGroup
		reads     atomic.Int64
		writeDone = make(chan error, 1)
	)
	go func() {
		for n := uint64(1); n <= total; n += 10 {
			var batch []Applied
			for k := n; k < n+10; k++ {
				batch = append(batch, Applied{Seq: k, At: t0.Add(time.Duration(k) * time.Millisecond),
					Event: event("s1", "c", fmt.Sprintf("http://s1/r%06d", k), cr, fmt.Sprint(k))})
			}
			if err := c.ApplyBatch(ctx, batch); err != nil {
				writeDone <- err
				return
			}
		}
		writeDone <- nil
	}()
	errs := make(chan error, 4)
	for r := range 4 {
		wg.Go(func() {
			var lastSeen uint64
			for ctx.Err() == nil {
				// The applied seq and the change log of one snapshot agree:
				// every event creates a resource, so the log is 1..seq.
				st, err := c.Stats(ctx)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
				if st.LastApplied < lastSeen {
					errs <- fmt.Errorf("reader %d: LastApplied went back from %d to %d", r, lastSeen, st.LastApplied)
					return
				}
				lastSeen = st.LastApplied
				if st.Changes != int64(st.LastApplied) || st.Resources != int64(st.LastApplied) {
					errs <- fmt.Errorf("reader %d: inconsistent snapshot %+v", r, st)
					return
				}
				n := 0
				err = c.Resources(ctx, "c", "", 0, func(*Resource) error { n++; return nil })
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
				if uint64(n) < lastSeen {
					errs <- fmt.Errorf("reader %d: listed %d resources after seeing %d applied", r, n, lastSeen)
					return
				}
				reads.Add(1)
			}
		})
	}
	if err := <-writeDone; err != nil {
		t.Fatalf("writer: %v", err)
	}
	// Let the readers finish at least one more round against the final state.
	target := reads.Load() + 4
	checkFor(t, 30*time.Second, func() bool { return reads.Load() >= target || len(errs) > 0 }, "readers to read the final state")
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads.Load() < 8 {
		t.Fatalf("only %d reads ran alongside the writer", reads.Load())
	}
	if n := lastApplied(t, c); n != total {
		t.Fatalf("LastApplied = %d, want %d", n, total)
	}
}
