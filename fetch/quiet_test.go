package fetch

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// TestQuietSourceCaughtUp is a new Source that answers its first requests
// with 503 (a Source under load) and then goes quiet, fetched at the
// default politeness (10 requests a second to its host) with the default
// retry schedule. Every change is in the store well before the one
// minute that a first retry once waited, which held a 1,000-resource
// Source that had gone quiet back by that minute; and the warnings of
// the changes handed back are summarised, not one per change.
func TestQuietSourceCaughtUp(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 12, Seed: 5, MinSize: 16, MaxSize: 256})
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	// Each resource answers its first max_attempts requests with 503:
	// a change's first delivery that makes every attempt fails, and the
	// next one succeeds. The 503s are counted by resource, not for the
	// Source as a whole: a delivery handed back for its host's congestion
	// after an attempt or two leaves a shared count to the deliveries
	// after it, and on a busy machine some change then failed three
	// deliveries, waiting 5 s, 20 s and 80 s.
	for _, c := range changes {
		u, err := url.Parse(c.URI)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.SetFault(u.Path, sim.Fault{Status: http.StatusServiceUnavailable, Times: upstream.DefaultConfig().MaxAttempts}); err != nil {
			t.Fatal(err)
		}
	}
	client := sourceClient(t, srv.URL, func(cfg *upstream.Config) {
		cfg.Sleep = func(context.Context, time.Duration) error { return nil } // the client's own backoff is not what is tested
	})

	var logs testutil.Buffer
	cfg := Defaults()
	cfg.Workers = 8
	// Well under the test queue's ack wait (2s), as a node requires: at
	// the default 20s, a change held past 2s (waiting for its host's
	// slot, or paced at its host's rate) went to a second worker, and its
	// event was stored twice.
	cfg.InProgressEvery = 300 * time.Millisecond
	p, err := New(cfg, queueDeps(t, q, store, func(string) *upstream.Client { return client }),
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})), nil)
	if err != nil {
		t.Fatal(err)
	}
	publishAll(t, q, changes)
	errc := make(chan error, 1)
	go func() { errc <- p.Run(context.Background()) }()
	t.Cleanup(func() { p.Close(); <-errc })

	// The bound is not a measurement: under the old first retry of one
	// minute this could not pass, with the new one of 5 s it passes with
	// a wide margin on a busy machine.
	eventually(t, 45*time.Second, "every change stored after the Source's 503s", func() bool {
		return len(events(t, q)) == len(changes) && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	checkEvents(t, q, store, srv, changes)
	// However the failures fell (a change whose host was busy is handed
	// back without a warning), they are not one warning per change.
	if warned := strings.Count(logs.String(), "will try again"); warned > 2 {
		t.Errorf("%d retry warnings for %d changes failing for one reason at one Source, want at most two (one, and a summary if a minute passed)", warned, len(changes))
	}
}

// TestRetryWarningsSummarised: a hundred failures of one Source for one
// reason within a minute are one warning; the next after the minute says
// how many were not logged; another Source or reason is logged at once.
func TestRetryWarningsSummarised(t *testing.T) {
	var logs testutil.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	r := newRetryLog()
	r.now = func() time.Time { return now }
	for range 100 {
		r.warn(log, "s", "transient", "change failed; will try again")
	}
	r.warn(log, "t", "transient", "change failed; will try again")
	r.warn(log, "s", "mismatch", "change failed; will try again")
	if n := strings.Count(logs.String(), "will try again"); n != 3 {
		t.Fatalf("%d warnings for 100 failures of one Source and reason and two others, want 3:\n%s", n, logs.String())
	}
	now = now.Add(retryLogWindow)
	r.warn(log, "s", "transient", "change failed; will try again")
	if !strings.Contains(logs.String(), "suppressed=99") {
		t.Fatalf("the warning after the window does not count the 99 not logged:\n%s", logs.String())
	}
}
