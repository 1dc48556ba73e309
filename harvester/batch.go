package harvester

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
)

// BatchPublisher queues many Changes at once: when PublishChanges returns
// nil every change of the batch is stored in the stream. A Publisher that
// also has it lets a baseline queue without one round trip per change,
// which otherwise caps a baseline at about 1,600 changes a second.
type BatchPublisher interface {
	PublishChanges(ctx context.Context, cs []*viaduct.Change) error
}

var _ BatchPublisher = (*queue.Queue)(nil)

// publishBatchSize is how many changes a batch holds before it is queued.
// A pass that fails loses at most this many changes from the queue,
// which the next pass queues again since no cursor moved.
const publishBatchSize = 256

// batch gathers the changes of one document for one publish. Whoever
// gathers must flush before moving a cursor past them: a change is
// queued only once flush has returned nil.
type batch struct {
	p    *pass
	bp   BatchPublisher // nil: publish one change at a time
	pend []*viaduct.Change
}

func (p *pass) newBatch() *batch {
	b := &batch{p: p}
	b.bp, _ = p.h.deps.Publisher.(BatchPublisher)
	return b
}

// add queues c, at once when the Publisher has no batches, else when
// the batch is full.
func (b *batch) add(ctx context.Context, c *viaduct.Change) error {
	if b.bp == nil {
		return b.p.publish(ctx, c)
	}
	b.p.h.m.attempts.WithLabelValues(b.p.src.Name).Inc()
	b.pend = append(b.pend, c)
	if len(b.pend) >= publishBatchSize {
		return b.flush(ctx)
	}
	return nil
}

// flush queues every change gathered and returns once all are stored.
func (b *batch) flush(ctx context.Context) error {
	if len(b.pend) == 0 {
		return nil
	}
	pend := b.pend
	b.pend = b.pend[:0]
	p := b.p
	if err := p.awaitBacklog(ctx); err != nil {
		return fmt.Errorf("source %s: waiting for the fetch workers before queueing changes read from %s: %w", p.src.Name, pend[0].Doc, err)
	}
	if err := b.bp.PublishChanges(ctx, pend); err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindPublish).Inc()
		first := pend[0]
		return fmt.Errorf("source %s: queue %d changes read from %s: %w", p.src.Name, len(pend), first.Doc, err)
	}
	p.h.backlog.queued()
	for _, c := range pend {
		p.h.m.changes.WithLabelValues(p.src.Name, c.Op).Inc()
	}
	return nil
}
