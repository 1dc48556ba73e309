package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/queue"
)

// Pool is a node's set of fetch workers. Run starts them; Close stops them.
type Pool struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	m      *metrics
	tracer trace.Tracer
	bufs   buffers

	// completions are the changes read and verified whose copies are
	// being committed or whose events are not yet acknowledged (see
	// handle); slots bounds them to twice cfg.Workers, which with the
	// workers and the parked changes stays under the CHANGES consumer's
	// pending window at the defaults. Both are set by Run, before any
	// worker starts.
	completions *sync.WaitGroup
	slots       chan struct{}

	// retries summarises the warnings of changes handed back (retryLog).
	retries *retryLog

	// lot holds changes whose host was saturated (see lot).
	lot *lot

	// store and events hold changes while the blob store, or the store
	// of events, fails (see gate).
	store, events *gate

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	running bool
	closed  bool
}

// New checks cfg and deps and registers the metrics with reg (nil: none).
// Nothing runs until Run.
func New(cfg Config, deps Deps, logger *slog.Logger, reg prometheus.Registerer) (*Pool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case deps.Changes == nil:
		return nil, errors.New("fetch: no change source")
	case deps.Blobs == nil:
		return nil, errors.New("fetch: no blob store")
	case deps.Events == nil:
		return nil, errors.New("fetch: no event publisher")
	case deps.Client == nil:
		return nil, errors.New("fetch: no upstream clients")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("fetch: register metrics: %w", err)
	}
	tp := deps.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	p := &Pool{cfg: cfg, deps: deps, log: logger, m: m, tracer: tp.Tracer("github.com/viaduct-mirror/viaduct/fetch"),
		lot: newLot(cfg.MaxParked, cfg.InProgressEvery, logger), retries: newRetryLog()}
	p.store = newGate("the blob store", storeProbe(deps.Blobs), logger)
	p.events = newGate("the store of events", eventsProbe(deps.Events), logger)
	return p, nil
}

// Run runs cfg.Workers workers until ctx ends or Close is called, then lets
// the changes under way finish for up to cfg.DrainTimeout. It returns nil
// after a normal stop, or the error that stopped the workers (the queue's
// connection closed under them).
func (p *Pool) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.closed || p.running {
		p.mu.Unlock()
		return errors.New("fetch: pool closed or already running")
	}
	runCtx, cancel := context.WithCancel(ctx)
	p.running, p.cancel, p.done = true, cancel, make(chan struct{})
	done := p.done
	p.mu.Unlock()
	defer close(done)
	defer cancel()
	// A pool that stopped on an error may be run again (the node restarts
	// a role that stopped); one that was closed may not.
	defer func() { p.mu.Lock(); p.running = false; p.mu.Unlock() }()

	// Work on a change already taken outlives runCtx by DrainTimeout, so
	// a stop does not waste a transfer nearly done.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()

	errc := make(chan error, p.cfg.Workers)
	var wg sync.WaitGroup
	p.completions, p.slots = &sync.WaitGroup{}, make(chan struct{}, completionsPerWorker*p.cfg.Workers)
	for range p.cfg.Workers {
		wg.Go(func() {
			if err := p.work(runCtx, workCtx); err != nil {
				errc <- err
				cancel()
			}
		})
	}
	// all closes once every worker has stopped and every event sent has
	// its verdict.
	all := make(chan struct{})
	go func() { wg.Wait(); p.completions.Wait(); close(all) }()
	select {
	case <-all:
	case <-runCtx.Done():
		t := time.NewTimer(p.cfg.DrainTimeout)
		select {
		case <-all:
		case <-t.C:
			stopWork()
			<-all
		}
		t.Stop()
	}
	p.lot.release()
	if r, ok := p.deps.Changes.(Releaser); ok {
		r.Release()
	}
	close(errc)
	return <-errc
}

// Close stops the workers and waits for Run to return. It is safe to call
// more than once and without Run.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	cancel, done := p.cancel, p.done
	p.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// errBusy: the change's host had every slot taken for the wait allowed.
var errBusy = errors.New("fetch: host busy")

// lotPoll is how long a worker waits for a new change while some are
// parked, before it looks at the lot again; one of them, the lot's
// watcher, comes back as soon as a parked host's rate allows a request
// (lot.watch). The one worker whose pull is already with the server waits
// for its answer (queue.ChangeStream.NextBefore, up to its poll of 5s, or
// until the pool stops) so that nothing delivered is dropped; the others
// come back to the lot on time.
const lotPoll = 500 * time.Millisecond

// work is one worker: take a parked change whose host is free, else a new
// one, and handle it, until ctx ends.
func (p *Pool) work(ctx, workCtx context.Context) error {
	for ctx.Err() == nil {
		msg := p.lot.take()
		if msg == nil {
			var err error
			if msg, err = p.next(ctx); err != nil {
				return err
			}
			if msg == nil {
				continue
			}
		}
		p.turn(workCtx, msg)
	}
	return nil
}

// next pulls a new change: nil, nil when there is none yet (the worker
// looks at the lot again), an error only when the queue is gone.
func (p *Pool) next(ctx context.Context) (*queue.ChangeMsg, error) {
	var deadline time.Time
	if p.lot.len() > 0 {
		// The watcher pulls nothing, since a pull already with the server
		// is waited for whatever the deadline: the other workers pull, so
		// a lone worker never watches.
		if p.cfg.Workers > 1 {
			if poll, ok := p.lot.watch(lotPoll); ok {
				t := time.NewTimer(poll)
				select {
				case <-ctx.Done():
				case <-t.C:
				}
				t.Stop()
				p.lot.unwatch()
				return nil, nil
			}
		}
		// The lot's poll is a deadline beside ctx, not one of ctx's own:
		// a stop must still end a pull that outlived the poll.
		deadline = time.Now().Add(lotPoll)
	}
	msg, err := p.deps.Changes.NextBefore(ctx, deadline)
	switch {
	case err == nil:
		return msg, nil
	case ctx.Err() != nil:
		return nil, nil
	case !deadline.IsZero() && !time.Now().Before(deadline):
		// The lot's poll ran out (NextBefore's DeadlineExceeded among
		// them: it returns that only once the deadline has passed).
		return nil, nil
	case errors.Is(err, nats.ErrConnectionClosed):
		return nil, fmt.Errorf("fetch: read changes: %w", err)
	}
	p.log.Error("fetch: cannot read the next change; trying again", "err", err)
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return nil, nil
}

// turn handles msg without waiting on a saturated host while there is
// other work: the change is parked, else given HostWait for a slot, else
// handed back for BusyRetry on its first delivery; only a change that has
// already been handed back (or when HostWait and the lot are off) waits
// for its host as long as it takes.
func (p *Pool) turn(ctx context.Context, msg *queue.ChangeMsg) {
	if !errors.Is(p.handle(ctx, msg, time.Nanosecond), errBusy) {
		return
	}
	if client := p.deps.Client(msg.Change.Source); client != nil && p.lot.park(msg, client) {
		p.m.parked.WithLabelValues(msg.Change.Source).Inc()
		return
	}
	if p.cfg.HostWait > 0 && !errors.Is(p.handle(ctx, msg, p.cfg.HostWait), errBusy) {
		return
	}
	if msg.Delivered <= 1 {
		p.m.retried.WithLabelValues(msg.Change.Source, "busy").Inc()
		if err := msg.Nak(p.cfg.BusyRetry); err != nil {
			p.log.Warn("could not hand back a change for a busy host", "source", msg.Change.Source, "uri", msg.Change.URI, "err", err)
		}
		return
	}
	p.handle(ctx, msg, 0)
}

// StoreFault is why the workers wait for the blob store or the store of
// events, or nil when they do not: a condition of the node's readiness.
func (p *Pool) StoreFault() error {
	if err := p.store.Fault(); err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	if err := p.events.Fault(); err != nil {
		return fmt.Errorf("store of events: %w", err)
	}
	return nil
}
