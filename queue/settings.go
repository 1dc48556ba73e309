package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ensureStream creates the stream sc, or compares an existing one with it:
// a difference is applied only when this node may change shared settings
// (mayUpdate), and logged otherwise, so that on a cluster the last node to
// start does not silently win. A difference JetStream cannot apply
// (retention, storage) makes Open fail rather than lose data.
func (q *Queue) ensureStream(ctx context.Context, sc jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := q.js.Stream(ctx, sc.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if s, err = q.js.CreateStream(ctx, sc); err != nil {
			return nil, fmt.Errorf("queue: create stream %s: %w", sc.Name, err)
		}
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("queue: read stream %s: %w", sc.Name, err)
	}
	diffs := streamDiffs(&s.CachedInfo().Config, &sc)
	if len(diffs) == 0 {
		return s, nil
	}
	if !q.mayUpdate() {
		q.log.Warn("stream settings differ from this node's; kept as they are (run viaduct migrate to apply this node's)",
			"stream", sc.Name, "differences", diffs)
		return s, nil
	}
	q.log.Info("updating stream settings", "stream", sc.Name, "differences", diffs)
	if s, err = q.js.UpdateStream(ctx, sc); err != nil {
		return nil, fmt.Errorf("queue: update stream %s: %w", sc.Name, err)
	}
	return s, nil
}

// ensureConsumer does for the CHANGES consumer what ensureStream does for
// a stream.
func (q *Queue) ensureConsumer(ctx context.Context, cc jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := q.js.Consumer(ctx, StreamChanges, cc.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		if c, err = q.js.CreateConsumer(ctx, StreamChanges, cc); err != nil {
			return nil, fmt.Errorf("queue: create consumer %s on %s: %w", cc.Durable, StreamChanges, err)
		}
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("queue: read consumer %s on %s: %w", cc.Durable, StreamChanges, err)
	}
	diffs := consumerDiffs(&c.CachedInfo().Config, &cc)
	if len(diffs) == 0 {
		return c, nil
	}
	if !q.mayUpdate() {
		q.log.Warn("consumer settings differ from this node's; kept as they are (run viaduct migrate to apply this node's)",
			"consumer", cc.Durable, "differences", diffs)
		return c, nil
	}
	q.log.Info("updating consumer settings", "consumer", cc.Durable, "differences", diffs)
	if c, err = q.js.UpdateConsumer(ctx, StreamChanges, cc); err != nil {
		return nil, fmt.Errorf("queue: update consumer %s on %s: %w", cc.Durable, StreamChanges, err)
	}
	return c, nil
}

// differ collects "name: found X, this node wants Y".
type differ []string

func (d *differ) add(name string, have, want any) {
	if fmt.Sprint(have) != fmt.Sprint(want) {
		*d = append(*d, fmt.Sprintf("%s: found %v, this node wants %v", name, have, want))
	}
}

func streamDiffs(have, want *jetstream.StreamConfig) []string {
	var d differ
	if !slices.Equal(have.Subjects, want.Subjects) {
		d.add("subjects", have.Subjects, want.Subjects)
	}
	d.add("retention", have.Retention, want.Retention)
	d.add("discard", have.Discard, want.Discard)
	d.add("storage", have.Storage, want.Storage)
	d.add("replicas", have.Replicas, want.Replicas)
	d.add("duplicate_window", have.Duplicates, want.Duplicates)
	d.add("max_age", have.MaxAge, want.MaxAge)
	d.add("max_bytes", have.MaxBytes, want.MaxBytes)
	d.add("allow_direct", have.AllowDirect, want.AllowDirect)
	d.add("compression", have.Compression, want.Compression)
	return d
}

func consumerDiffs(have, want *jetstream.ConsumerConfig) []string {
	var d differ
	d.add("filter_subject", have.FilterSubject, want.FilterSubject)
	d.add("ack_wait", have.AckWait, want.AckWait)
	d.add("max_deliver", have.MaxDeliver, want.MaxDeliver)
	d.add("max_ack_pending", have.MaxAckPending, want.MaxAckPending)
	d.add("backoff", durations(have.BackOff), durations(want.BackOff))
	if want.Replicas != 0 && have.Replicas != 0 {
		d.add("replicas", have.Replicas, want.Replicas)
	}
	return d
}

// durations prints nil and empty alike.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "[]"
	}
	return fmt.Sprint(ds)
}
