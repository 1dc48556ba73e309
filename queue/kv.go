package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Key-value buckets viaduct keeps beside its streams: state that any node
// must be able to read and that only one node at a time may move.
const (
	// BucketLeases holds one lease per name (a Source, "gc"): who holds
	// it, until the bucket's TTL passes without a renewal.
	BucketLeases = "viaduct_leases"
	// BucketPositions holds each Source's harvest position (cursors,
	// last baseline, notification subscription), written only by the
	// holder of the Source's lease.
	BucketPositions = "viaduct_positions"
	// BucketHub holds the downstream WebSub subscriptions of the hub,
	// and the notifier's cursor (notify.SharedState).
	BucketHub = "viaduct_hub"
)

// bucketConfig is what viaduct expects of one of its buckets.
func bucketConfig(cfg *Config, name string) jetstream.KeyValueConfig {
	kc := jetstream.KeyValueConfig{
		Bucket:   name,
		History:  1,
		Storage:  jetstream.FileStorage,
		Replicas: cfg.Replicas,
	}
	switch name {
	case BucketLeases:
		kc.Description = "viaduct: who harvests each Source"
		kc.TTL = cfg.LeaseTTL
	case BucketPositions:
		kc.Description = "viaduct: each Source's harvest position"
	case BucketHub:
		kc.Description = "viaduct: the hub's downstream subscriptions"
	}
	return kc
}

// Bucket opens one of viaduct's buckets (BucketLeases, BucketPositions,
// BucketHub), creating it when it does not exist. An existing bucket whose
// settings differ from this node's is used as it is, the difference
// logged, unless Config.Migrate (or the embedded server, which no other
// node shares) says to update it.
func (q *Queue) Bucket(ctx context.Context, name string) (jetstream.KeyValue, error) {
	q.kvMu.Lock()
	defer q.kvMu.Unlock()
	if kv, ok := q.kvs[name]; ok {
		return kv, nil
	}
	want := bucketConfig(&q.cfg, name)
	kv, err := q.js.KeyValue(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		if _, err = q.js.CreateKeyValue(ctx, want); err != nil {
			return nil, fmt.Errorf("queue: create bucket %s: %w", name, err)
		}
		if kv, err = q.leaderReads(ctx, name); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("queue: open bucket %s: %w", name, err)
	default:
		if _, err = q.checkBucket(ctx, kv, want); err != nil {
			return nil, err
		}
		if kv, err = q.leaderReads(ctx, name); err != nil {
			return nil, err
		}
	}
	if q.kvs == nil {
		q.kvs = map[string]jetstream.KeyValue{}
	}
	q.kvs[name] = kv
	return kv, nil
}

// checkBucket compares an existing bucket with want.
func (q *Queue) checkBucket(ctx context.Context, kv jetstream.KeyValue, want jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue: read bucket %s settings: %w", want.Bucket, err)
	}
	have := st.Config()
	var diffs []string
	if have.TTL != want.TTL {
		diffs = append(diffs, fmt.Sprintf("ttl %s, this node wants %s", have.TTL, want.TTL))
	}
	if have.Replicas != want.Replicas {
		diffs = append(diffs, fmt.Sprintf("replicas %d, this node wants %d", have.Replicas, want.Replicas))
	}
	if have.History != want.History {
		diffs = append(diffs, fmt.Sprintf("history %d, this node wants %d", have.History, want.History))
	}
	if len(diffs) == 0 {
		return kv, nil
	}
	if !q.mayUpdate() {
		q.log.Warn("bucket settings differ from this node's; kept as they are (run viaduct migrate to apply this node's)",
			"bucket", want.Bucket, "differences", diffs)
		return kv, nil
	}
	q.log.Info("updating bucket settings", "bucket", want.Bucket, "differences", diffs)
	kv, err = q.js.UpdateKeyValue(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("queue: update bucket %s settings: %w", want.Bucket, err)
	}
	return kv, nil
}

// mayUpdate reports whether this node may change shared settings: on the
// embedded server it is the only node; on a cluster only when told to.
func (q *Queue) mayUpdate() bool { return q.cfg.Embedded() || q.cfg.Migrate }

// LeaseTTL is how long a lease outlives its holder's last renewal.
func (q *Queue) LeaseTTL() time.Duration { return q.cfg.LeaseTTL }

// leaderReads turns direct gets off on the bucket's stream and opens the
// bucket again: a direct get may be answered by a replica that has not yet
// applied the last write, and a node reading a cursor, a lease or a
// subscription another node has just written must see that write.
func (q *Queue) leaderReads(ctx context.Context, name string) (jetstream.KeyValue, error) {
	s, err := q.js.Stream(ctx, "KV_"+name)
	if err != nil {
		return nil, fmt.Errorf("queue: read bucket %s's stream: %w", name, err)
	}
	if sc := s.CachedInfo().Config; sc.AllowDirect {
		sc.AllowDirect = false
		if _, err := q.js.UpdateStream(ctx, sc); err != nil {
			return nil, fmt.Errorf("queue: bucket %s: turn direct gets off: %w", name, err)
		}
	}
	kv, err := q.js.KeyValue(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("queue: open bucket %s: %w", name, err)
	}
	return kv, nil
}

// DeleteKey deletes key from bucket as the bucket's own Delete does
// (a marker the bucket keeps, which its watchers see) and returns the
// marker's revision, which that Delete does not tell: a hub that removed
// a subscription needs it to tell the watch's older changes from newer
// ones.
func (q *Queue) DeleteKey(ctx context.Context, bucket, key string) (uint64, error) {
	m := nats.NewMsg("$KV." + bucket + "." + key)
	m.Header.Set("KV-Operation", "DEL")
	ack, err := q.js.PublishMsg(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("queue: delete %s from bucket %s: %w", key, bucket, err)
	}
	return ack.Sequence, nil
}
