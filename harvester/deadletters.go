package harvester

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// DeadLetters is the dead-letter stream as the harvester uses it: after a
// pass over a Source that ended well (the Source answers again), the
// changes of that Source that ran out of deliveries are queued again, or
// dropped when the catalog has since moved past them. The pass runs only
// on the node that holds the Source's lease, so only that node does it.
type DeadLetters interface {
	ScanDeadLetters(ctx context.Context, source string, after uint64, fn func(queue.DeadLetter) bool) error
	RequeueDeadLetter(ctx context.Context, d queue.DeadLetter) error
	DropDeadLetter(ctx context.Context, d queue.DeadLetter, reason string) error
}

var _ DeadLetters = (*queue.Queue)(nil)

// Outcomes of a dead letter looked at after a pass, in
// viaduct_harvester_dead_letters_total.
const (
	deadRequeued   = "requeued"   // queued again on CHANGES
	deadSuperseded = "superseded" // dropped: the catalog has a later state of its resource
	deadGaveUp     = "gave_up"    // kept for the operator: out of comebacks, or a kind a recovery does not fix
)

// deadExamples is how many URIs of each outcome the summary line shows.
const deadExamples = 3

// comebackKinds are the dead letters' kinds that a Source recovering may
// fix. The others (forbidden, too_large, bad_change, undecodable, other)
// need the operator: a changed configuration, then a retry on demand.
var comebackKinds = map[string]bool{
	"transient": true, "truncated": true, "mismatch": true, "not_found": true, "upstream": true,
	"store": true, "lookup": true, "publish": true, "no_verdict": true, "interrupted": true,
	"abandoned": true, "unknown_source": true,
}

// deadScans remembers, per Source, the last dead letter a pass of this
// process looked at: every letter before it that is still there was kept
// on purpose (gave up), so the next pass starts after it and counts each
// such letter once per process, not at every pass.
type deadScans struct {
	mu    sync.Mutex
	after map[string]uint64
}

func (d *deadScans) get(source string) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.after[source]
}

func (d *deadScans) set(source string, seq uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.after == nil {
		d.after = map[string]uint64{}
	}
	d.after[source] = max(d.after[source], seq)
}

// deadRound is what one pass did with its Source's dead letters.
type deadRound struct {
	counts   map[string]int
	examples map[string][]string
}

func (r *deadRound) add(outcome, example string) {
	if r.counts == nil {
		r.counts, r.examples = map[string]int{}, map[string][]string{}
	}
	r.counts[outcome]++
	if len(r.examples[outcome]) < deadExamples {
		r.examples[outcome] = append(r.examples[outcome], example)
	}
}

// deadLetters runs at the end of a pass that ended well: the Source's
// dead letters come back, up to DeadLetterBatch of them, each at most
// DeadLetterRetries times. A failure here is logged, never the pass's.
func (p *pass) deadLetters(ctx context.Context) {
	dl, cfg := p.h.deps.DeadLetters, p.h.cfg.DeadLetterConfig
	if dl == nil || cfg.DeadLetterRetries <= 0 {
		return
	}
	start, looked := time.Now(), 0
	var round deadRound
	var stepErr error
	err := dl.ScanDeadLetters(ctx, p.src.Name, p.h.dead.get(p.src.Name), func(d queue.DeadLetter) bool {
		if looked >= cfg.DeadLetterBatch {
			return false
		}
		outcome, example, err := p.comeBack(ctx, d)
		if err != nil {
			stepErr = err
			return false
		}
		looked++
		p.h.dead.set(p.src.Name, d.Seq)
		if outcome != "" {
			p.h.m.dead.WithLabelValues(p.src.Name, outcome).Inc()
			round.add(outcome, example)
		}
		return true
	})
	if err == nil {
		err = stepErr
	}
	if len(round.counts) > 0 {
		p.log.Info("dead letters looked at after a pass that ended well",
			"requeued", round.counts[deadRequeued], "superseded", round.counts[deadSuperseded], "gave_up", round.counts[deadGaveUp],
			"requeued_uris", round.examples[deadRequeued], "superseded_uris", round.examples[deadSuperseded],
			"gave_up_uris", round.examples[deadGaveUp], "took", time.Since(start))
	}
	if err != nil && ctx.Err() == nil {
		p.log.Warn("dead letters: stopped, the next pass that ends well goes on", "err", err)
	}
}

// comeBack decides one dead letter's fate and carries it out. It returns
// the outcome ("" when another node took the letter first) and what the
// summary shows of it: the URI, and why for any outcome but requeued.
func (p *pass) comeBack(ctx context.Context, d queue.DeadLetter) (outcome, example string, err error) {
	var c viaduct.Change
	if jerr := c.Decode(d.Payload); jerr != nil || c.URI == "" {
		return deadGaveUp, fmt.Sprintf("dead letter %d (undecodable)", d.Seq), nil
	}
	switch kind := d.Kind(); {
	case d.Retries >= p.h.cfg.DeadLetterRetries:
		return deadGaveUp, fmt.Sprintf("%s (came back %d times, %s)", c.URI, d.Retries, kind), nil
	case !comebackKinds[kind]:
		return deadGaveUp, fmt.Sprintf("%s (%s: not retried automatically)", c.URI, kind), nil
	}
	l, found, err := p.h.deps.Held.Lookup(ctx, c.Collection, c.URI)
	if err != nil {
		return "", "", fmt.Errorf("source %s: dead letter %d: look up %s in the catalog: %w", p.src.Name, d.Seq, c.URI, err)
	}
	if why := supersededBy(&c, &l, found); why != "" {
		err := p.h.deps.DeadLetters.DropDeadLetter(ctx, d, why)
		switch {
		case errors.Is(err, queue.ErrDeadLetterNotFound):
			return "", "", nil
		case err != nil:
			return "", "", err
		}
		return deadSuperseded, c.URI + " (" + why + ")", nil
	}
	if err := p.h.deps.DeadLetters.RequeueDeadLetter(ctx, d); err != nil {
		return "", "", err
	}
	return deadRequeued, c.URI, nil
}

// supersededBy says why the catalog no longer needs c, or "" when it
// does. The rule is the fetch workers' (a statement about the resource
// placed after c's, see docs/fetching.md): dropping here only saves the
// round through the queue.
func supersededBy(c *viaduct.Change, l *catalog.Lookup, found bool) string {
	if !found {
		return ""
	}
	t := c.Time
	if c.Listed.After(t) {
		t = c.Listed
	}
	switch {
	case t.IsZero():
		return ""
	case l.Order.After(t) && l.Deleted:
		return "deleted later, at " + l.Order.UTC().Format(time.RFC3339)
	case l.Order.After(t):
		return "a later change is held, of " + l.Order.UTC().Format(time.RFC3339)
	case c.Op == resourcesync.Deleted && l.Deleted && !t.After(l.UpstreamTime):
		return "already deleted"
	}
	return ""
}

// newDeadLetterMetric is viaduct_harvester_dead_letters_total.
func newDeadLetterMetric(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "viaduct", Subsystem: "harvester", Name: "dead_letters_total",
		Help: "Dead letters of the Source looked at after a pass that ended well, by outcome: requeued, superseded (dropped), gave_up (kept)."},
		[]string{"source", "outcome"})
	if reg != nil {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// declareDead creates the Source's series at 0.
func declareDead(c *prometheus.CounterVec, source string) {
	for _, o := range []string{deadRequeued, deadSuperseded, deadGaveUp} {
		c.WithLabelValues(source, o)
	}
}
