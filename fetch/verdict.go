package fetch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// handle is a worker's verdict on one change, whole, in the order it is
// reached: a change that cannot be handled here is dead-lettered; one
// whose copy the node already holds is skipped (acked, after its event if
// it has one); any other is fetched, and acked once its copy is committed
// and its event stored. A change that failed this time is parked when its
// host was busy, handed back at once when the worker was stopped, held at
// a gate while the blob store or the store of events fails, handed back
// for a later delivery while one may help, else dead-lettered with the
// evidence.
//
// When the publisher can publish asynchronously, the commit, the event
// and the settling of a change with an event are left to a completion,
// and the worker goes on to its next change meanwhile. wait bounds the
// wait for a slot of the change's host (0: as long as it takes); when it
// runs out, handle returns errBusy with the change still held, for
// Pool.turn to park it.
func (p *Pool) handle(ctx context.Context, msg *queue.ChangeMsg, wait time.Duration) error {
	c := msg.Change
	ctx, t := p.track(ctx, msg)
	var st *staged
	var skip string
	var f *failure
	client := p.deps.Client(c.Source)
	switch {
	case client == nil:
		f = &failure{reason: "unknown_source", err: fmt.Errorf("source %q is not configured on this node", c.Source), evidence: evidence(c, c.URI)}
	case c.Op == resourcesync.Deleted:
		ev, why, err := p.deleted(ctx, c)
		if st, skip = done(ev), why; err != nil {
			f = &failure{reason: "lookup", retry: true, err: err, evidence: evidence(c, c.URI)}
		}
	case c.Op != resourcesync.Created && c.Op != resourcesync.Updated:
		f = &failure{reason: "bad_change", err: fmt.Errorf("unknown change %q", c.Op), evidence: evidence(c, c.URI)}
	case c.Length != nil && *c.Length > p.cfg.MaxBlobBytes:
		f = &failure{reason: "too_large", err: fmt.Errorf("declared length %d is above max_blob_bytes %d", *c.Length, p.cfg.MaxBlobBytes), evidence: evidence(c, c.URI)}
	default:
		var ev *viaduct.Event
		var why string
		var err error
		if c.Repair == "" { // a repair is fetched whatever is held: see viaduct.Change.Repair
			ev, why, err = p.skip(ctx, c, c.Fresh && msg.Delivered <= 1)
		}
		switch st, skip = done(ev), why; {
		case err != nil:
			f = &failure{reason: "lookup", retry: true, err: err, evidence: evidence(c, c.URI)}
		case skip != "":
		case !p.store.wait(ctx):
			// Nothing is asked of the Source while its bitstream could
			// not be stored: the change waited, held, for the blob store.
			f = &failure{reason: "interrupted", retry: true, interrupted: true, err: ctx.Err(), evidence: evidence(c, c.URI)}
		default:
			st, f = p.fetch(ctx, msg, client, wait, t.log)
		}
	}

	// settle carries the verdict out once the change has its outcome: f
	// is why it failed (nil when its effect, if any, is durable).
	settle := func(f *failure) error {
		defer t.end()
		if f != nil && !f.busy {
			t.span.SetStatus(codes.Error, f.Error())
		}
		switch {
		case f == nil: // skipped or fetched
			if st != nil {
				t.span.SetAttributes(attribute.String("viaduct.sha256", st.ev.SHA256), attribute.Int64("viaduct.length", st.ev.Length))
			}
			if skip != "" {
				p.m.skipped.WithLabelValues(c.Source, skip).Inc()
				t.span.SetAttributes(attribute.String("viaduct.skipped", skip))
				t.log.Debug("change handled without fetching", "reason", skip, "event", st != nil)
			}
			if err := msg.Ack(ctx); err != nil {
				// The change comes back; its event, if any, is already
				// published and publishing it again is recognised as a
				// duplicate.
				t.log.Warn("could not acknowledge a handled change; it will be delivered again", "err", err)
				return nil
			}
			p.m.handled.WithLabelValues(c.Source).Inc()
		case f.busy: // parked by Pool.turn
			t.span.SetAttributes(attribute.Bool("viaduct.host_busy", true))
			return errBusy
		case f.interrupted:
			if err := msg.Nak(0); err != nil {
				t.log.Warn("could not hand back an interrupted change", "err", err)
			}
		case p.heldAtGate(ctx, msg, f, t.log):
			// Held until its store answers, then handed back at once.
		case f.retry && !msg.LastAttempt() && (f.retryFor == 0 || msg.Delivered < uint64(f.retryFor)):
			delay := p.cfg.retryDelay(msg.Delivered)
			p.m.retried.WithLabelValues(c.Source, f.reason).Inc()
			p.retries.warn(t.log, c.Source, f.reason, "change failed; will try again", "reason", f.reason, "err", f.err, "delivered", msg.Delivered, "retry_in", delay)
			if err := msg.Nak(delay); err != nil {
				t.log.Warn("could not hand back a failed change; the queue will deliver it again", "err", err)
			}
		default:
			p.m.dead.WithLabelValues(c.Source, f.reason).Inc()
			t.log.Error("change dead-lettered", "reason", f.reason, "err", f.err, "delivered", msg.Delivered)
			if err := msg.DeadLetter(ctx, f.Error(), f.evidence); err != nil {
				t.log.Error("could not dead-letter a failed change; the queue will deliver it again", "reason", f.reason, "err", err)
			}
		}
		return nil
	}

	if f == nil && st != nil && restores(c, st) {
		// A repair that read the copy's very bytes: committing them puts
		// the copy back under its key, which the catalog names already,
		// so the change is acked with no event.
		if f = p.commit(ctx, st); f == nil {
			t.span.SetAttributes(attribute.String("viaduct.repaired", st.ev.SHA256))
			t.log.Info("copy repaired from the Source", "sha256", st.ev.SHA256, "length", st.ev.Length)
		}
		return settle(f)
	}
	if f == nil && st != nil {
		if ap, ok := p.deps.Events.(AsyncPublisher); ok && p.completions != nil {
			// A slot bounds the changes past their reading: being
			// committed, or waiting for their events' acks.
			p.slots <- struct{}{}
			p.completions.Go(func() {
				defer func() { <-p.slots }()
				_ = settle(p.record(ctx, st, ap))
			})
			return nil
		}
		f = p.record(ctx, st, nil)
	}
	return settle(f)
}

// heldAtGate holds the change at the gate of the store f failed on, and
// reports whether it did; false when f is no failure of a store.
func (p *Pool) heldAtGate(ctx context.Context, msg *queue.ChangeMsg, f *failure, log *slog.Logger) bool {
	g := p.gateOf(f)
	if g == nil {
		return false
	}
	p.waitGate(ctx, msg, g, f, log)
	return true
}

// gateOf is the gate of the dependency whose failure f is; nil when f is
// not a failure of the blob store or of the store of events.
func (p *Pool) gateOf(f *failure) *gate {
	switch f.reason {
	case "store":
		return p.store
	case "publish":
		// A publish fails for other causes than its store (a cluster's
		// "duplicate message id is in process", a timeout): only one the
		// store itself refused at some moment of the publish (it may
		// take writes again by now: JetStream restarted while the
		// publish waited) waits at the gate; the others are retried as
		// any failure.
		if f.storeFaulted {
			return p.events
		}
	}
	return nil
}
