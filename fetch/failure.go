package fetch

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// failure is why a change could not be handled this time.
type failure struct {
	// reason is a short fixed word: the metric label and the start of the
	// dead letter's reason.
	reason string
	// retry says another delivery may succeed.
	retry bool
	// retryFor, when non-zero, ends retrying after that many deliveries,
	// before the queue's last one (404s).
	retryFor int
	// interrupted: the worker was stopped; the change goes back at once
	// and the attempt does not count as a verdict.
	interrupted bool
	// busy: every slot of the host stayed taken; nothing was sent. The
	// change is not failed: it waits for its host (see lot).
	busy bool
	// abandoned: a test hook stood for a crash; the change gets no
	// verdict at all.
	abandoned bool
	err       error
	// evidence is what an operator needs to judge the dead letter.
	evidence map[string]string
}

func (f *failure) Error() string { return f.reason + ": " + f.err.Error() }

// evidence starts a dead letter's evidence with what the Source declared.
func evidence(c *viaduct.Change, uri string) map[string]string {
	ev := map[string]string{"uri": uri}
	if uri != c.URI {
		ev["origin"] = c.URI
	}
	if len(c.Hash) > 0 {
		ev["declared_hash"] = c.Hash.String()
	}
	if v := c.Hash.Get(resourcesync.SHA256); v != "" {
		ev["declared_sha256"] = v
	}
	if v := c.Hash.Get(resourcesync.MD5); v != "" {
		ev["declared_md5"] = v
	}
	if c.Length != nil {
		ev["declared_length"] = strconv.FormatInt(*c.Length, 10)
	}
	if c.Doc != "" {
		ev["doc"] = c.Doc
	}
	return ev
}

// classify turns an upstream error on uri into a failure.
func classify(ctx context.Context, c *viaduct.Change, uri string, err error, notFoundAttempts int) *failure {
	f := &failure{err: err, evidence: evidence(c, uri)}
	f.evidence["error"] = err.Error()
	var ue *upstream.Error
	if errors.As(err, &ue) && ue.Status != 0 {
		f.evidence["status"] = strconv.Itoa(ue.Status)
	}
	switch {
	case ctx.Err() != nil:
		f.reason, f.retry, f.interrupted = "interrupted", true, true
	case errors.Is(err, upstream.ErrBusy):
		f.reason, f.retry, f.busy = "busy", true, true
	case errors.Is(err, upstream.ErrForbidden):
		f.reason = "forbidden"
	case errors.Is(err, upstream.ErrNotFound):
		f.reason, f.retry, f.retryFor = "not_found", true, notFoundAttempts
	case errors.Is(err, upstream.ErrTooLarge):
		f.reason = "too_large"
	case errors.Is(err, upstream.ErrTruncated):
		f.reason, f.retry = "truncated", true
	case upstream.IsTransient(err):
		f.reason, f.retry = "transient", true
	default:
		f.reason = "upstream"
	}
	return f
}

// hope ranks failures by how likely a later delivery is to succeed; when
// the origin and every mirror failed, the most hopeful one decides.
func (f *failure) hope() int {
	switch {
	case f.interrupted, f.busy:
		return 0
	case f.retry && f.retryFor == 0 && f.reason != "mismatch":
		return 1
	case f.reason == "mismatch":
		return 2
	case f.retry:
		return 3
	}
	return 4
}

// fail hands the change back for a later delivery or, when no delivery is
// left or none would help, dead-letters it with the evidence.
func (p *Pool) fail(ctx context.Context, msg *queue.ChangeMsg, f *failure, log *slog.Logger) {
	if f.interrupted {
		if err := msg.Nak(0); err != nil {
			log.Warn("could not hand back an interrupted change", "err", err)
		}
		return
	}
	if g := p.gateOf(f); g != nil {
		p.waitGate(ctx, msg, g, f, log)
		return
	}
	retry := f.retry && !msg.LastAttempt() && (f.retryFor == 0 || msg.Delivered < uint64(f.retryFor))
	if retry {
		delay := p.cfg.retryDelay(msg.Delivered)
		p.m.retried.WithLabelValues(msg.Change.Source, f.reason).Inc()
		p.retries.warn(log, msg.Change.Source, f.reason, "change failed; will try again", "reason", f.reason, "err", f.err, "delivered", msg.Delivered, "retry_in", delay)
		if err := msg.Nak(delay); err != nil {
			log.Warn("could not hand back a failed change; the queue will deliver it again", "err", err)
		}
		return
	}
	p.m.dead.WithLabelValues(msg.Change.Source, f.reason).Inc()
	log.Error("change dead-lettered", "reason", f.reason, "err", f.err, "delivered", msg.Delivered)
	if err := msg.DeadLetter(ctx, f.Error(), f.evidence); err != nil {
		log.Error("could not dead-letter a failed change; the queue will deliver it again", "reason", f.reason, "err", err)
	}
}

// gateOf is the gate of the dependency whose failure f is; nil when f is
// not a failure of the blob store or of the store of events.
func (p *Pool) gateOf(f *failure) *gate {
	switch f.reason {
	case "store":
		return p.store
	case "publish":
		return p.events
	}
	return nil
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
