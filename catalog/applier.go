package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct"
)

// Batching bounds of the applier. A batch is written applyBatchDelay
// after its first event, unless it has gathered applyStreamBatch events
// by then (800 a second: a baseline, a large Change List); it then grows
// until applyBatchMaxDelay after its first event (from
// applyFirstBatchMaxDelay for a stream's first batch; see maxDelay), or
// until its stream pauses: no event for applyBatchDelay (the end of a
// baseline, or of a burst). Any batch waits on while the fetch workers are
// saturated (see saturated), and is written once it holds applyBatchSize
// events, or more while they are saturated or the applier is far behind
// (see limitAt). A lone push is thus applied as soon as before, while a
// stream is written in batches of thousands: each transaction costs about
// a millisecond of its own, and every index page an event touches is
// written to the WAL once per batch, however many of the batch's events
// touch it. Into a catalog of 100,000 resources whose URIs are not listed
// in its byte order, batches of 750 cost 150 CPU-µs and 41 KiB written per event,
// batches of 2,500 114 µs and 19.5 KiB (BenchmarkApplyIngest, catalog
// schema 6; schema 7 writes 16.0 KiB at 2,500). A baseline from a plain
// file server runs at 1,500-2,000 resources a second here: the bound of 2
// seconds lets its batches fill, where half a second held them at 750 to
// 1,000. Its events reach the catalog, and Destinations, up to that much
// later, and its last ones applyBatchDelay after the last came; a push at
// ordinary rates is not held.
//
// An applier behind EVENTS by applyCatchUp events or more (a restart after
// a long stop, or a baseline whose fetch workers outrun the catalog) lets
// a batch grow to applyCatchUp instead, and one whose fetch workers are
// saturated (a baseline, a large Change List) to applySaturatedBatch (see
// limitAt): the random keys of the md5 index make each batch dirty about
// as many index pages as it has events once the catalog holds a few
// hundred thousand resources, and four times the events per batch write
// those pages a quarter as often.
// Into 250,000 resources whose URIs are not in the catalog's order,
// batches of 2,500 cost 112 CPU-µs and wrote 23.4 KiB an event, of 5,000
// 105 µs and 15.4 KiB, of 10,000 94 µs and 10.2 KiB (BenchmarkApplyIngest,
// catalog schema 7), for about 15 MB more memory at 10,000.
const (
	applyBatchSize      = 2500
	applyCatchUp        = 10000
	applySaturatedBatch = 5000
	applyBatchDelay     = 20 * time.Millisecond
	applyStreamBatch    = 16
	applyBatchMaxDelay  = 2 * time.Second
	// applyFirstBatchMaxDelay bounds a stream's first batch; the bound
	// doubles with each batch after it (see maxDelay).
	applyFirstBatchMaxDelay = 250 * time.Millisecond
)

// EventLog is what the applier reads of EVENTS, the aggregator's change
// log: the events from a sequence on, the last sequence published, and
// how many changes wait untaken on CHANGES (whether the fetch workers are
// saturated, so that more events are certain to come). queue.Queue is one.
type EventLog interface {
	Events(ctx context.Context, from uint64, fn func(ctx context.Context, seq uint64, at time.Time, ev *viaduct.Event) error) error
	LastEventSeq(ctx context.Context) (uint64, error)
	Untaken(ctx context.Context) (uint64, error)
}

// SpanBook is told, for each applied event that carried a trace context,
// its collection and span, so that the notification telling of the change
// can link to it. nil records nothing.
type SpanBook interface {
	Add(collection string, sc trace.SpanContext)
}

// ApplierOptions are what an Applier needs besides its catalog and log.
type ApplierOptions struct {
	Log    *slog.Logger
	Tracer trace.Tracer
	Spans  SpanBook
	// Applied, when set, is signalled (without blocking) after each batch
	// reaches the catalog, so that the notifier tells subscribers at once.
	Applied chan<- struct{}
}

// NewApplier returns the applier that keeps cat from events.
func NewApplier(cat *Catalog, events EventLog, opts ApplierOptions) *Applier {
	return &Applier{events: events, cat: cat, log: opts.Log, tracer: opts.Tracer, links: opts.Spans, applied: opts.Applied}
}

// Applier keeps the node's catalog from EVENTS. It resumes at the sequence
// after the last one the catalog recorded, so a restart neither skips nor
// repeats an event: the catalog stores that sequence in the same
// transaction as the events' effects. Events are applied in batches (one
// transaction each) because a transaction per event caps a baseline at a
// few thousand resources a second; a batch lost in a crash is simply read
// again from EVENTS.
type Applier struct {
	events EventLog
	cat    *Catalog
	log    *slog.Logger
	tracer trace.Tracer
	trace  batchTrace // the batch's events' trace contexts
	links  SpanBook   // where the notifier finds them
	// applied, when set, is signalled (without blocking) after each batch
	// reaches the catalog, so that the notifier tells subscribers at once.
	applied chan<- struct{}

	mu    sync.Mutex
	batch []Applied
	timer *time.Timer
	first time.Time // when the batch's first event came
	last  time.Time // when its latest event came
	err   error     // the first failed flush; stops the applier

	// limit is how many events the batch may hold once it has reached
	// applyBatchSize (see limitAt).
	limit int

	// When the last batch was written, how many events it held, and the
	// bound it was held to (see maxDelay).
	wrote      time.Time
	wroteN     int
	wroteBound time.Duration

	// The last answer of saturated, and when it came.
	untakenMu   sync.Mutex
	untakenAt   time.Time
	untakenMany bool
}

// Run applies events until ctx ends.
func (a *Applier) Run(ctx context.Context) error {
	last, err := a.cat.LastApplied(ctx)
	if err != nil {
		return fmt.Errorf("applier: reading last applied sequence: %w", err)
	}
	a.log.Info("applier starting", "from_seq", last+1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = a.events.Events(ctx, last+1, func(ctx context.Context, seq uint64, at time.Time, ev *viaduct.Event) error {
		return a.add(ctx, cancel, Applied{Seq: seq, At: at, Event: ev})
	})
	a.mu.Lock()
	if a.timer != nil {
		a.timer.Stop()
	}
	flushErr := a.err
	if flushErr == nil {
		flushErr = a.flushLocked(context.WithoutCancel(ctx))
	}
	a.mu.Unlock()
	if flushErr != nil {
		return flushErr
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// add queues one event, writing the batch when it is full and arming the
// timer that writes a partial one.
func (a *Applier) add(ctx context.Context, stop context.CancelFunc, ap Applied) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	a.batch = append(a.batch, ap)
	a.last = time.Now()
	a.trace.add(ctx)
	n := len(a.batch)
	if n == applyBatchSize {
		a.limit = a.limitAt(ctx, ap.Seq)
	}
	if n >= applyBatchSize && n >= a.limit {
		if a.timer != nil {
			a.timer.Stop()
		}
		return a.flushLocked(ctx)
	}
	if len(a.batch) == 1 {
		a.first = a.last
		a.timer = time.AfterFunc(applyBatchDelay, func() { a.expire(ctx, stop) })
	}
	return nil
}

// expire runs when a batch's timer fires: it writes the batch if it is
// due, and otherwise sets the timer again.
func (a *Applier) expire(ctx context.Context, stop context.CancelFunc) {
	a.mu.Lock()
	defer a.mu.Unlock()
	wait, ok := a.due(ctx)
	switch {
	case !ok:
	case wait > 0:
		a.timer.Reset(wait)
	default:
		if err := a.flushLocked(context.WithoutCancel(ctx)); err != nil && a.err == nil {
			a.err = err
			stop()
		}
	}
}

// due is how much longer the pending batch should wait before it is
// written (0: now); ok is false when there is no batch, or when the one
// it was asked about was written meanwhile (its successor has a timer of
// its own). Called with a.mu held, which it lets go while it asks the
// server whether the workers are saturated, so that events keep coming
// in.
func (a *Applier) due(ctx context.Context) (wait time.Duration, ok bool) {
	if len(a.batch) == 0 {
		return 0, false
	}
	if wait := batchWait(time.Now(), a.first, a.last, len(a.batch), a.maxDelay()); wait > 0 || !a.mayWait() {
		return wait, true
	}
	first := a.first
	a.mu.Unlock()
	saturated := a.saturated(ctx)
	a.mu.Lock()
	if len(a.batch) == 0 || !a.first.Equal(first) {
		return 0, false
	}
	wait = batchWait(time.Now(), a.first, a.last, len(a.batch), a.maxDelay())
	if saturated && wait == 0 && a.mayWait() {
		wait = applyBatchDelay
	}
	return wait, true
}

// limitAt is how many events a batch that has reached applyBatchSize, the
// latest of them seq, may hold: applyCatchUp when the applier is behind
// EVENTS by that many events or more, applySaturatedBatch when it
// continues the batch written before it and the fetch workers are
// saturated (see saturated), so that events are certain to keep coming,
// and applyBatchSize otherwise. A stream's first batch is thus written at
// applyBatchSize, as soon as before, and a baseline's first resources
// reach Destinations at once. Asked once a batch, when it reaches
// applyBatchSize; a failure to ask keeps the ordinary bound. A batch
// still goes at applyBatchMaxDelay.
func (a *Applier) limitAt(ctx context.Context, seq uint64) int {
	if last, err := a.events.LastEventSeq(ctx); err == nil && last >= seq+applyCatchUp {
		return applyCatchUp
	}
	if a.continues() && a.saturated(ctx) {
		return applySaturatedBatch
	}
	return applyBatchSize
}

// A batch that is due waits on, applyBatchDelay at a time, while the
// fetch workers are saturated: while CHANGES holds applyStreamBatch
// messages or more that no worker has taken yet, more events are certain
// to come, and each of those messages already waits its turn in the queue.
// A baseline on a busy machine pauses many times a second (workers
// waiting for the CPU, a Source's answer, a sync of the blob store), and
// writing a batch at each pause cut its batches to a few hundred events;
// one into MinIO, at a few hundred resources a second, never gathered the
// 16 events in 20 ms that make a stream and was written 10 events at a
// time. Into a catalog of 20,000 whose URIs are not in its order, batches
// of 10 cost 212 CPU-µs and 67 KiB written per event, batches of 2,500 91
// µs and 8 KiB (BenchmarkApplyIngest, -benchtime 20000x).
// A batch waits on only if the batch before it was written just before
// it began (the same stream went on through the write), and only until
// it holds twice that batch's events, or applyBatchMaxDelay: a stream's
// first batch is written when it is due as before, so that a baseline's
// first resources reach Destinations at once, and its batches then double
// until they are full. Pushes at ordinary rates never saturate the
// workers and are not held; the tail of a baseline, once no change is
// left waiting, is written as soon as its stream pauses.
const (
	// saturatedFresh is how long an answer about CHANGES is used again:
	// a due batch asks at most this often.
	saturatedFresh = 100 * time.Millisecond
	// saturatedTimeout bounds the question; no answer writes the batch.
	// The batch's events keep coming in while it waits for the answer.
	saturatedTimeout = time.Second
)

// mayWait reports whether the batch continues the batch written before
// it, holds fewer than twice its events and is younger than
// applyBatchMaxDelay: one that waits on while the workers are saturated.
func (a *Applier) mayWait() bool {
	return len(a.batch) < 2*a.wroteN && a.continues() && time.Since(a.first) < applyBatchMaxDelay
}

// continues reports whether the pending batch began within applyBatchDelay
// of the last write: the same stream went on through it.
func (a *Applier) continues() bool { return a.first.Sub(a.wrote) < applyBatchDelay }

// saturated reports whether CHANGES holds applyStreamBatch messages
// (changes, or groups of them) or more that no worker has taken, asking
// the server at most every saturatedFresh. due calls it without a.mu, so that events keep coming
// in while it asks; limitAt calls it from the intake of events itself.
func (a *Applier) saturated(ctx context.Context) bool {
	a.untakenMu.Lock()
	defer a.untakenMu.Unlock()
	if time.Since(a.untakenAt) < saturatedFresh {
		return a.untakenMany
	}
	ctx, cancel := context.WithTimeout(ctx, saturatedTimeout)
	defer cancel()
	n, err := a.events.Untaken(ctx)
	a.untakenAt, a.untakenMany = time.Now(), err == nil && n >= applyStreamBatch
	return a.untakenMany
}

// batchWait is how much longer a batch of n events whose first came at
// first and latest at last should wait at now before it is written (0:
// write it now), if a stream's batch is written maxDelay after its first
// event at the latest. See applyBatchDelay.
func batchWait(now, first, last time.Time, n int, maxDelay time.Duration) time.Duration {
	age := now.Sub(first)
	if n >= applyStreamBatch {
		return max(min(maxDelay-age, applyBatchDelay-now.Sub(last)), 0)
	}
	return max(applyBatchDelay-age, 0)
}

// maxDelay is how long after its first event the pending batch is written
// at the latest: applyFirstBatchMaxDelay when no batch was written in the
// applyBatchMaxDelay before it (a stream begins), and otherwise twice the
// bound of the batch written last, up to applyBatchMaxDelay. A baseline's
// first resources thus reach the catalog, and Destinations, within a
// fraction of a second, rather than once 2,500 events have come (1.3 s at
// 2,000 a second), and its batches are soon as large as before. A pause
// of its events does not start the bound again: a baseline's batches
// follow one another within applyBatchMaxDelay, however its workers
// pause.
func (a *Applier) maxDelay() time.Duration {
	if a.first.Sub(a.wrote) >= applyBatchMaxDelay {
		return applyFirstBatchMaxDelay
	}
	return max(min(2*a.wroteBound, applyBatchMaxDelay), applyFirstBatchMaxDelay)
}

// flushLocked writes the pending batch. An event the catalog refuses is
// skipped after the rest of the batch is applied one by one: retrying it
// cannot help, and stopping would stall every later event.
func (a *Applier) flushLocked(ctx context.Context) (err error) {
	if len(a.batch) == 0 {
		return nil
	}
	batch, bound := a.batch, a.maxDelay()
	a.batch = nil
	defer func() { a.wrote, a.wroteN, a.wroteBound = time.Now(), len(batch), bound }()
	ctx, span := a.trace.start(ctx, a.tracer, batch, a.links)
	defer func() { endApplySpan(span, err) }()
	err = a.cat.ApplyBatch(ctx, batch)
	if !errors.Is(err, ErrInvalid) {
		if err != nil {
			return fmt.Errorf("applier: events %d to %d: %w", batch[0].Seq, batch[len(batch)-1].Seq, err)
		}
		a.signal()
		return nil
	}
	defer a.signal()
	for _, ap := range batch {
		err := a.cat.Apply(ctx, ap.Seq, ap.At, ap.Event)
		if errors.Is(err, ErrInvalid) {
			a.log.Error("applier: event refused by the catalog, skipped", "seq", ap.Seq, "source", ap.Event.Source, "uri", ap.Event.URI, "op", ap.Event.Op, "err", err)
			err = a.cat.Skip(ctx, ap.Seq)
		}
		if err != nil {
			return fmt.Errorf("applier: event %d (%s %s): %w", ap.Seq, ap.Event.Op, ap.Event.URI, err)
		}
	}
	return nil
}

// signal tells the notifier that the catalog changed; a signal already
// waiting covers this one.
func (a *Applier) signal() {
	select {
	case a.applied <- struct{}{}:
	default:
	}
}

// CaughtUp reports whether cat has applied every event published to
// events so far.
func CaughtUp(ctx context.Context, events EventLog, cat *Catalog) (bool, error) {
	last, err := events.LastEventSeq(ctx)
	if err != nil {
		return false, err
	}
	applied, err := cat.LastApplied(ctx)
	if err != nil {
		return false, err
	}
	return applied >= last, nil
}
