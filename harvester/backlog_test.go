package harvester

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestBaselineWaitsForTheWorkers: with nobody fetching, a baseline queues
// about MaxBacklog changes and waits; as a worker acknowledges changes it
// queues the rest, and every change arrives once. The workers are held
// for longer than the upstream request timeout: the Resource List the
// baseline is reading must survive the wait (it once failed with a
// deadline in the middle of the list whenever the workers were slow, as
// they are on a busy machine).
func TestBaselineWaitsForTheWorkers(t *testing.T) {
	const resources, maxBacklog = 1200, 300
	e := newEnv(t)
	srv := startSim(t, sim.Config{Resources: resources, Seed: 3})
	cfg := Defaults()
	cfg.MaxBacklog = maxBacklog
	h, err := New(cfg, []SourceConfig{simSource("s", srv)}, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.q}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// A baseline that fails ends the test at once rather than leave it
	// waiting for changes that will not come.
	done := make(chan error, 1)
	drainCtx, failed := context.WithCancel(ctx)
	defer failed()
	go func() {
		err := h.SyncOnce(ctx, "s")
		if err != nil {
			failed()
		}
		done <- err
	}()
	// The changes queued and not finished, at most: a baseline's
	// messages are full groups.
	backlog := func() uint64 {
		n, err := e.q.Backlog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n * queue.GroupMax
	}
	testutil.Eventually(t, 30*time.Second, "the baseline to fill the backlog", func() bool { return backlog() >= maxBacklog })
	// The harvester now polls every backlogPoll: it must hold, for longer
	// than one request to the Source may take.
	select {
	case err := <-done:
		t.Fatalf("the baseline ended (%v) with %d of %d changes queued and none fetched", err, backlog(), resources)
	case <-time.After(e.ucfg.RequestTimeout + 5*backlogPoll):
	}
	if n := backlog(); n > maxBacklog+publishBatchSize {
		t.Fatalf("backlog %d, want at most max_backlog %d plus one batch of %d", n, maxBacklog, publishBatchSize)
	}

	cs, err := e.q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < resources {
		m, err := cs.Next(drainCtx)
		if err != nil {
			select {
			case berr := <-done:
				t.Fatalf("after %d changes: the baseline ended: %v", len(seen), berr)
			default:
			}
			t.Fatalf("after %d changes: %v", len(seen), err)
		}
		if seen[m.Change.URI] {
			t.Errorf("%s queued twice", m.Change.URI)
		}
		seen[m.Change.URI] = true
		if n := backlog(); n > maxBacklog+publishBatchSize {
			t.Fatalf("backlog %d while draining, want at most %d", n, maxBacklog+publishBatchSize)
		}
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("baseline: %v", err)
	}
}

// TestLateSourceQueuesItsShare: with nobody fetching, a baseline of
// Source a fills the backlog; a pass over Source b that becomes due then
// queues its share at once rather than wait behind a's changes (which,
// on a host bounded by its politeness, could take the workers many
// minutes), and the whole stays within twice max_backlog and a batch.
// Drained, every change of both arrives once.
func TestLateSourceQueuesItsShare(t *testing.T) {
	const resources, maxBacklog = 1200, 320
	cfg := Defaults()
	cfg.MaxBacklog = maxBacklog
	e, h := twoBaselines(t, cfg, resources)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	drainCtx, failed := context.WithCancel(ctx)
	defer failed()
	done := make(chan error, 2)
	sync := func(name string) {
		go func() {
			err := h.SyncOnce(ctx, name)
			if err != nil {
				failed()
			}
			done <- err
		}()
	}
	backlogs := func() (uint64, map[string]uint64) {
		total, by, err := e.q.Backlogs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return total, by
	}
	limit := uint64(maxBacklog / queue.GroupMax)
	sync("a")
	testutil.Eventually(t, 30*time.Second, "a's baseline to fill the backlog", func() bool {
		total, _ := backlogs()
		return total > limit
	})
	sync("b")
	testutil.Eventually(t, 30*time.Second, "b's changes queued beside a's", func() bool {
		_, by := backlogs()
		return by[queue.ChangeSubject("b")] > 0
	})
	if total, by := backlogs(); total > 2*limit+publishBatchSize/queue.GroupMax {
		t.Fatalf("backlog %d messages (%v), want at most twice max_backlog and a batch: %d", total, by, 2*limit+publishBatchSize/queue.GroupMax)
	}

	cs, err := e.q.Changes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 2*resources {
		m, err := cs.Next(drainCtx)
		if err != nil {
			t.Fatalf("after %d changes: %v", len(seen), err)
		}
		key := m.Change.Source + " " + m.Change.URI
		if seen[key] {
			t.Errorf("%s queued twice", key)
		}
		seen[key] = true
		if err := m.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("baseline: %v", err)
		}
	}
}

// TestBacklogWaitGivesTheSlot: with one harvest slot and a starved_after
// longer than the test, a baseline of Source a fills the backlog and
// waits for the workers; a pass over Source b gets the slot and queues its
// share at once (under a second on an idle machine): waiting on the
// workers is no work of a's pass. When the wait lent the slot only after
// starved_after, as a wait on the Source does, the passes of fifty Sources
// started four every 2.3 s.
func TestBacklogWaitGivesTheSlot(t *testing.T) {
	const resources, maxBacklog = 1200, 320
	cfg := Defaults()
	cfg.MaxBacklog = maxBacklog
	cfg.Concurrency = 1
	cfg.StarvedAfter = 10 * time.Minute
	e, h := twoBaselines(t, cfg, resources)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	// The passes wait on the backlog until the test ends them.
	var passes sync.WaitGroup
	defer func() { cancel(); passes.Wait() }()
	passes.Go(func() { h.SyncOnce(ctx, "a") })
	testutil.Eventually(t, 30*time.Second, "a's baseline to fill the backlog", func() bool {
		total, _, err := e.q.Backlogs(ctx)
		return err == nil && total > maxBacklog/queue.GroupMax
	})
	passes.Go(func() { h.SyncOnce(ctx, "b") })
	start := time.Now()
	testutil.Eventually(t, 30*time.Second, "b's changes queued while a waits on the workers", func() bool {
		_, by, err := e.q.Backlogs(ctx)
		return err == nil && by[queue.ChangeSubject("b")] > 0
	})
	t.Logf("b queued %s after a's baseline filled the backlog", time.Since(start).Round(time.Millisecond))
}

// twoBaselines is a harvester with cfg over Sources a and b of resources
// each, queueing on the environment's queue, closed with the test.
func twoBaselines(t *testing.T, cfg Config, resources int) (*env, *Harvester) {
	t.Helper()
	e := newEnv(t)
	a := startSim(t, sim.Config{Resources: resources, Seed: 3})
	b := startSim(t, sim.Config{Resources: resources, Seed: 4})
	h, err := New(cfg, []SourceConfig{simSource("a", a), simSource("b", b)}, Deps{Client: e.client, Upstream: e.ucfg, Cursors: e.cat, Held: e.cat, Publisher: e.q}, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return e, h
}
