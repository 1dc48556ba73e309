package fetch

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// gate stands for one dependency of the workers (the blob store, or the
// queue's store of events) while it fails. A write that fails closes it;
// from then on a probe of the dependency runs, backing off from
// gateProbeMin to gateProbeMax, and the first probe that succeeds opens
// it again. Changes that failed on the dependency, and changes about to
// need it, wait at the gate, held (their heartbeats keep them from being
// handed to another worker) rather than handed back with a backoff: they
// are all taken up again within a probe's interval of the dependency
// answering, and an outage costs each change one delivery at most,
// however long it lasts. The probe is the only load on the dependency
// meanwhile, and the Source is not asked for bitstreams that could not
// be stored.
type gate struct {
	name  string
	probe func(context.Context) error
	log   *slog.Logger

	mu     sync.Mutex
	closed chan struct{} // closed when the gate opens; nil while open
	err    error         // why it closed
}

const (
	gateProbeMin = 250 * time.Millisecond
	gateProbeMax = 5 * time.Second
)

func newGate(name string, probe func(context.Context) error, log *slog.Logger) *gate {
	return &gate{name: name, probe: probe, log: log}
}

// fail closes the gate for err, and starts the probe that opens it, unless
// it is closed already. The probe runs until it succeeds or ctx ends (the
// workers stop); either opens the gate, so that workers run again later
// probe anew at their first failure.
func (g *gate) fail(ctx context.Context, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed != nil {
		return
	}
	g.closed, g.err = make(chan struct{}), err
	g.log.Warn("fetch workers wait for "+g.name+" to answer again", "err", err)
	go g.run(ctx, g.closed, time.Now())
}

func (g *gate) run(ctx context.Context, closed chan struct{}, since time.Time) {
	defer func() {
		g.mu.Lock()
		g.closed, g.err = nil, nil
		g.mu.Unlock()
		close(closed)
	}()
	for wait := gateProbeMin; ; wait = min(2*wait, gateProbeMax) {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		err := g.probe(ctx)
		if err == nil {
			g.log.Info(g.name+" answers again; waiting changes go on", "down_for", time.Since(since).Round(time.Millisecond))
			return
		}
		g.mu.Lock()
		g.err = err
		g.mu.Unlock()
	}
}

// wait returns once the gate is open, or ctx ended (false).
func (g *gate) wait(ctx context.Context) bool {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed == nil {
		return true
	}
	select {
	case <-closed:
		return true
	case <-ctx.Done():
		return false
	}
}

// Fault is why the gate is closed: the failure, then the latest probe's;
// nil while it is open.
func (g *gate) Fault() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// waitGate closes g for f and holds the change until g opens again, then
// hands it back for a delivery at once: the change is taken up within a
// probe's interval of the dependency answering, not at its next backoff
// step, and waiting costs it no delivery. A stop while it waits hands it
// back as interrupted.
func (p *Pool) waitGate(ctx context.Context, msg *queue.ChangeMsg, g *gate, f *failure, log *slog.Logger) {
	g.fail(ctx, f.err)
	p.m.retried.WithLabelValues(msg.Change.Source, f.reason).Inc()
	p.retries.warn(log, msg.Change.Source, f.reason, "change failed; held until "+g.name+" answers again", "reason", f.reason, "err", f.err, "delivered", msg.Delivered)
	g.wait(ctx)
	if err := msg.Nak(0); err != nil {
		log.Warn("could not hand back a change held for "+g.name+"; the queue will deliver it again", "err", err)
	}
}
