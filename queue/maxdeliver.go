package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// maxDeliveriesSubject is the advisory JetStream sends when a change has
// been delivered max_deliver times without an ack or a term.
const maxDeliveriesSubject = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + StreamChanges + "."

// maxDeliveriesAdvisory is the part of the advisory we use.
type maxDeliveriesAdvisory struct {
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// watchMaxDeliveries is the safety net under the last-attempt contract: a
// change that ran out of deliveries without being dead-lettered (its worker
// crashed, timed out or Nak'ed it) would otherwise stay in CHANGES, never
// delivered again. It is dead-lettered here, then removed from CHANGES.
// Every node listens; the dead letter's message id and a delete of what is
// already gone make that harmless.
func (q *Queue) watchMaxDeliveries() error {
	subject := maxDeliveriesSubject + q.cfg.Consumer
	sub, err := q.nc.Subscribe(subject, func(m *nats.Msg) {
		var adv maxDeliveriesAdvisory
		if err := json.Unmarshal(m.Data, &adv); err != nil {
			q.log.Error("unreadable max-deliveries advisory", "err", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := q.rescue(ctx, adv); err != nil {
			q.log.Error("change ran out of deliveries and could not be dead-lettered", "seq", adv.StreamSeq, "err", err)
		}
	})
	if err != nil {
		return fmt.Errorf("queue: subscribe to %s: %w", subject, err)
	}
	q.advisories = sub
	return nil
}

func (q *Queue) rescue(ctx context.Context, adv maxDeliveriesAdvisory) error {
	raw, err := q.changes.GetMsg(ctx, adv.StreamSeq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil // already dead-lettered or removed by another node
	}
	if err != nil {
		return fmt.Errorf("read change %d: %w", adv.StreamSeq, err)
	}
	reason := fmt.Sprintf("no verdict after %d deliveries (max_deliver %d): the worker neither acked nor dead-lettered it", adv.Deliveries, q.cfg.MaxDeliver)
	h := deadHeaders(raw.Header, raw.Subject, StreamChanges, raw.Sequence, adv.Deliveries, reason, nil)
	if !isGroup(raw.Header) {
		if err := q.publishDead(ctx, StreamChanges, raw.Subject, raw.Sequence, h, raw.Data); err != nil {
			return fmt.Errorf("dead-letter change %d: %w", raw.Sequence, err)
		}
	} else {
		// A group: a dead letter for each of its changes, as its
		// workers would have made.
		for i, line := range groupLines(raw.Data) {
			if err := q.publishDeadMember(ctx, raw.Subject, raw.Sequence, i, h, line); err != nil {
				return fmt.Errorf("dead-letter change %d/%d: %w", raw.Sequence, i, err)
			}
		}
	}
	if err := q.changes.DeleteMsg(ctx, raw.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("remove dead-lettered change %d: %w", raw.Sequence, err)
	}
	name, _ := SubjectName(raw.Subject)
	q.log.Warn("change dead-lettered after its last delivery", "source", name, "seq", raw.Sequence, "reason", reason)
	return nil
}
