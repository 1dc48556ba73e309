package fetch

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
)

// tracked is a change under way: its span, its logger, and the heartbeat
// that keeps it from being handed to another worker meanwhile.
type tracked struct {
	span trace.Span
	log  *slog.Logger
	end  func()
}

// track starts following msg until its verdict is carried out (end).
func (p *Pool) track(ctx context.Context, msg *queue.ChangeMsg) (context.Context, *tracked) {
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
	return ctx, &tracked{span: span, log: changeLogger(p.log, c), end: func() {
		hb.stop()
		p.m.inFlight.WithLabelValues(c.Source).Dec()
		span.End()
	}}
}

// record makes a change's effect durable: it commits the staged copy (a
// skip's event has none to commit), then stores its event, through ap
// when the publisher publishes asynchronously (nil: it waits for each).
// The failure, if any, is the blob store's or the store of events'.
func (p *Pool) record(ctx context.Context, st *staged, ap AsyncPublisher) *failure {
	if st.w != nil {
		if f := p.commit(ctx, st); f != nil {
			return f
		}
	}
	var err error
	epoch := eventsEpoch(p.deps.Events)
	if ap != nil {
		var pe *queue.PendingEvent
		if pe, err = ap.PublishEventAsync(ctx, st.ev); err == nil {
			_, err = pe.Wait(ctx)
		}
	} else {
		_, err = p.deps.Events.PublishEvent(ctx, st.ev)
	}
	if err != nil {
		c := &st.ev.Upstream
		return &failure{reason: "publish", retry: true, interrupted: ctx.Err() != nil, err: fmt.Errorf("publish event: %w", err), evidence: evidence(c, c.URI),
			storeFaulted: faultedSince(epoch, eventsEpoch(p.deps.Events))}
	}
	p.m.published.WithLabelValues(st.ev.Source, st.ev.Op).Inc()
	return nil
}

// done wraps an event that needs no commit (nil for none).
func done(ev *viaduct.Event) *staged {
	if ev == nil {
		return nil
	}
	return &staged{ev: ev}
}
