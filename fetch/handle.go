package fetch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// handle takes one change to a verdict: acked (with or without an event),
// handed back for a later delivery, or dead-lettered. When the publisher
// can publish asynchronously, the verdict on a change with an event is
// left to a completion that waits for the event's acknowledgement, and
// the worker goes on to its next change meanwhile; the change is still
// acked only once its event is stored. wait bounds the wait for a slot of
// the change's host (0: as long as it takes); when it runs out, handle
// returns errBusy with the change still held, for the caller to decide.
// It returns errAbandoned only when the test hook stands for a crash.
func (p *Pool) handle(ctx context.Context, msg *queue.ChangeMsg, wait time.Duration) error {
	c := msg.Change
	ctx, span := p.tracer.Start(msg.Context(ctx), "fetch "+c.Op, trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			attribute.String("viaduct.source", c.Source),
			attribute.String("viaduct.collection", c.Collection),
			attribute.String("viaduct.uri", c.URI),
			attribute.Int64("viaduct.delivered", int64(msg.Delivered)),
		))
	p.m.inFlight.WithLabelValues(c.Source).Inc()
	hb := startHeartbeat(msg, p.cfg.InProgressEvery, p.log)
	end := func() {
		hb.stop()
		p.m.inFlight.WithLabelValues(c.Source).Dec()
		span.End()
	}
	log := changeLogger(p.log, c)
	st, skip, f := p.decide(ctx, msg, wait, log)
	if f != nil && f.abandoned {
		end()
		return errAbandoned
	}
	if f != nil && f.busy {
		span.SetAttributes(attribute.Bool("viaduct.host_busy", true))
		end()
		return errBusy
	}
	if f != nil {
		defer end()
		span.SetStatus(codes.Error, f.Error())
		p.fail(ctx, msg, f, log)
		return nil
	}
	if st == nil {
		defer end()
		p.acked(ctx, msg, nil, skip, span, log)
		return nil
	}
	if restores(c, st) {
		defer end()
		return p.repaired(ctx, msg, st, span, log)
	}
	if ap, ok := p.deps.Events.(AsyncPublisher); ok && p.completions != nil {
		// A slot bounds the changes past their reading: being committed,
		// or waiting for their events' acks.
		p.slots <- struct{}{}
		p.completions.Go(func() {
			defer func() { <-p.slots }()
			defer end()
			if ok, _ := p.committed(ctx, msg, st, span, log); !ok {
				return
			}
			pe, err := ap.PublishEventAsync(ctx, st.ev)
			if err != nil {
				p.publishFailed(ctx, msg, err, span, log)
				return
			}
			if _, err := pe.Wait(ctx); err != nil {
				p.publishFailed(ctx, msg, err, span, log)
				return
			}
			if p.published(msg, st.ev, span) {
				p.acked(ctx, msg, st.ev, skip, span, log)
			}
		})
		return nil
	}
	defer end()
	if ok, abandoned := p.committed(ctx, msg, st, span, log); abandoned {
		return errAbandoned
	} else if !ok {
		return nil
	}
	if _, err := p.deps.Events.PublishEvent(ctx, st.ev); err != nil {
		p.publishFailed(ctx, msg, err, span, log)
		return nil
	}
	if !p.published(msg, st.ev, span) {
		return errAbandoned
	}
	p.acked(ctx, msg, st.ev, skip, span, log)
	return nil
}

// committed commits a staged copy (a skip's event has none to commit).
// It is not ok when the commit failed (the change has its verdict) or
// when the test hook stood for a crash after it (abandoned: the change is
// left unacknowledged).
func (p *Pool) committed(ctx context.Context, msg *queue.ChangeMsg, st *staged, span trace.Span, log *slog.Logger) (ok, abandoned bool) {
	if st.w == nil {
		return true, false
	}
	f := p.commit(ctx, st)
	switch {
	case f == nil:
		return true, false
	case f.abandoned:
		return false, true
	}
	span.SetStatus(codes.Error, f.Error())
	p.fail(ctx, msg, f, log)
	return false, false
}

// publishFailed hands the change back: its event was not stored.
func (p *Pool) publishFailed(ctx context.Context, msg *queue.ChangeMsg, err error, span trace.Span, log *slog.Logger) {
	c := msg.Change
	f := &failure{reason: "publish", retry: true, interrupted: ctx.Err() != nil, err: fmt.Errorf("publish event: %w", err), evidence: evidence(c, c.URI)}
	span.SetStatus(codes.Error, f.Error())
	p.fail(ctx, msg, f, log)
}

// published counts a stored event; false when the test hook stands for a
// crash before the change is acked.
func (p *Pool) published(msg *queue.ChangeMsg, ev *viaduct.Event, span trace.Span) bool {
	p.m.published.WithLabelValues(ev.Source, ev.Op).Inc()
	span.SetAttributes(attribute.String("viaduct.sha256", ev.SHA256), attribute.Int64("viaduct.length", ev.Length))
	return p.afterPublish == nil || p.afterPublish(msg) == nil
}

// acked acks a change whose effect, if any, is durable.
func (p *Pool) acked(ctx context.Context, msg *queue.ChangeMsg, ev *viaduct.Event, skip string, span trace.Span, log *slog.Logger) {
	if skip != "" {
		p.m.skipped.WithLabelValues(msg.Change.Source, skip).Inc()
		span.SetAttributes(attribute.String("viaduct.skipped", skip))
		log.Debug("change handled without fetching", "reason", skip, "event", ev != nil)
	}
	if err := msg.Ack(ctx); err != nil {
		// The change comes back; its event, if any, is already published
		// and publishing it again is recognised as a duplicate.
		log.Warn("could not acknowledge a handled change; it will be delivered again", "err", err)
		return
	}
	p.m.handled.WithLabelValues(msg.Change.Source).Inc()
}

// decide works out what to do with the change: an event to publish (nil
// for none), the reason it was handled without a fetch (empty when it was
// fetched), or a failure.
func (p *Pool) decide(ctx context.Context, msg *queue.ChangeMsg, wait time.Duration, log *slog.Logger) (*staged, string, *failure) {
	c := msg.Change
	client := p.deps.Client(c.Source)
	if client == nil {
		return nil, "", &failure{reason: "unknown_source", err: fmt.Errorf("source %q is not configured on this node", c.Source), evidence: evidence(c, c.URI)}
	}
	switch c.Op {
	case resourcesync.Deleted:
		ev, skip, f := p.deleted(ctx, c)
		return done(ev), skip, f
	case resourcesync.Created, resourcesync.Updated:
	default:
		return nil, "", &failure{reason: "bad_change", err: fmt.Errorf("unknown change %q", c.Op), evidence: evidence(c, c.URI)}
	}
	if c.Length != nil && *c.Length > p.cfg.MaxBlobBytes {
		return nil, "", &failure{reason: "too_large", err: fmt.Errorf("declared length %d is above max_blob_bytes %d", *c.Length, p.cfg.MaxBlobBytes), evidence: evidence(c, c.URI)}
	}
	if c.Repair == "" { // a repair is fetched whatever is held: see viaduct.Change.Repair
		ev, skip, err := p.skip(ctx, c, c.Fresh && msg.Delivered <= 1)
		if err != nil {
			return nil, "", &failure{reason: "lookup", retry: true, err: err, evidence: evidence(c, c.URI)}
		}
		if skip != "" {
			return done(ev), skip, nil
		}
	}
	st, f := p.fetch(ctx, msg, client, wait, log)
	return st, "", f
}

// done wraps an event that needs no commit (nil for none).
func done(ev *viaduct.Event) *staged {
	if ev == nil {
		return nil
	}
	return &staged{ev: ev}
}

// newEvent is the event recording the aggregator's copy of c.
func newEvent(c *viaduct.Change, sha256, md5 string, length int64, typ string) *viaduct.Event {
	return &viaduct.Event{
		Source: c.Source, Collection: c.Collection, URI: c.URI, Op: c.Op,
		SHA256: sha256, MD5: md5, Length: length, Type: typ,
		Upstream: *c,
	}
}
