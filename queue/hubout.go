package queue

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamHubOut is the stream of the hub's queued deliveries: one subject
// per subscription, HubOutPrefix + <subscription id>. What a delivery
// holds and how it is read is package notify's; this file only declares
// the stream, so that `viaduct migrate` and every node agree on it.
const (
	StreamHubOut = "HUBOUT"
	HubOutPrefix = "hubout."
)

// HubOutConfig bounds the hub's queues.
type HubOutConfig struct {
	// MaxPerSubscriber is the most deliveries queued for one subscriber.
	// A subscriber that far behind misses newer notifications (a warning
	// is logged); it sees the gap in from/until and reads the Change List.
	// Default 10,000.
	MaxPerSubscriber int64 `yaml:"max_per_subscriber"`
	// MaxBytes caps the whole stream; past it, publications fail and are
	// retried. Default 1 GiB.
	MaxBytes int64 `yaml:"max_bytes"`
}

// HubOutStream creates or updates the HUBOUT stream and returns it.
func (q *Queue) HubOutStream(ctx context.Context, cfg HubOutConfig) (jetstream.Stream, error) {
	if cfg.MaxPerSubscriber <= 0 {
		cfg.MaxPerSubscriber = 10000
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 30
	}
	return q.ensureStream(ctx, jetstream.StreamConfig{
		Name:        StreamHubOut,
		Description: "viaduct: change notifications queued for each downstream subscriber",
		Subjects:    []string{HubOutPrefix + "*"},
		Retention:   jetstream.LimitsPolicy,
		// A full queue refuses the new delivery instead of silently
		// dropping the oldest one, which the subscriber has not had.
		Discard:              jetstream.DiscardNew,
		DiscardNewPerSubject: true,
		MaxMsgsPerSubject:    cfg.MaxPerSubscriber,
		MaxBytes:             cfg.MaxBytes,
		MaxMsgs:              -1,
		Storage:              jetstream.FileStorage,
		Replicas:             q.cfg.Replicas,
		Duplicates:           q.cfg.DuplicateWindow,
		// No direct gets: a replica that has not yet applied an ack's
		// delete would hand the delivered head out again. Reads go to
		// the stream's leader.
		AllowDirect: false,
	})
}
