package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct/websub"
)

// StreamHubOut is the stream of the hub's queued deliveries: one subject
// per subscription, hubout.<subscription id>.
const (
	StreamHubOut = "HUBOUT"
	hubOutPrefix = "hubout."
	// headerTopic carries a delivery's topic; the payload is the body.
	headerTopic = "Viaduct-Topic"
)

// HubOutboxConfig bounds the hub's queues.
type HubOutboxConfig struct {
	// MaxPerSubscriber is the most deliveries queued for one subscriber.
	// A subscriber that far behind misses newer notifications (a warning
	// is logged); it sees the gap in from/until and reads the Change List.
	// Default 10,000.
	MaxPerSubscriber int64 `yaml:"max_per_subscriber"`
	// MaxBytes caps the whole stream; past it, publications fail and are
	// retried. Default 1 GiB.
	MaxBytes int64 `yaml:"max_bytes"`
}

// HubOutbox is a websub.Outbox on JetStream: stream HUBOUT, one subject
// per subscription. A delivery's Seq is its stream sequence, and
// acknowledging it deletes the message, so the head of a subscriber's
// queue is simply its first message. Appends carry a Nats-Msg-Id derived
// from the subscription and the payload, so that a notification queued
// again after a crash (or by a retried Publish) within the duplicate
// window is stored once.
type HubOutbox struct {
	stream jetstream.Stream
	js     jetstream.JetStream
	log    *slog.Logger
}

var _ websub.Outbox = (*HubOutbox)(nil)

// HubOutbox creates or updates the HUBOUT stream and returns the Outbox on
// it.
func (q *Queue) HubOutbox(ctx context.Context, cfg HubOutboxConfig) (*HubOutbox, error) {
	if cfg.MaxPerSubscriber <= 0 {
		cfg.MaxPerSubscriber = 10000
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 30
	}
	s, err := q.ensureStream(ctx, jetstream.StreamConfig{
		Name:        StreamHubOut,
		Description: "viaduct: change notifications queued for each downstream subscriber",
		Subjects:    []string{hubOutPrefix + "*"},
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
	if err != nil {
		return nil, err
	}
	return &HubOutbox{stream: s, js: q.js, log: q.log}, nil
}

func hubOutSubject(sub string) (string, error) {
	if sub == "" || strings.ContainsAny(sub, ".*> \t\r\n") {
		return "", fmt.Errorf("queue: %q is not a subscription id", sub)
	}
	return hubOutPrefix + sub, nil
}

// Append queues d for sub. A queue at MaxPerSubscriber drops d with a
// warning rather than failing: failing would stop notifications to every
// other subscriber until this one's lease ends.
func (o *HubOutbox) Append(ctx context.Context, sub string, d websub.Delivery) error {
	subj, err := hubOutSubject(sub)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(d.Payload)
	msg := &nats.Msg{Subject: subj, Data: d.Payload, Header: nats.Header{}}
	msg.Header.Set(headerTopic, d.Topic)
	if links := encodeLinks(d.Links); links != "" {
		msg.Header.Set(headerLinks, links)
	}
	_, err = o.js.PublishMsg(ctx, msg, jetstream.WithMsgID("hub|"+sub+"|"+hex.EncodeToString(sum[:16])))
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeStoreFailed &&
		strings.Contains(apiErr.Description, "per subject") {
		o.log.Warn("hub outbox: subscriber's queue is full; notification dropped", "subscription", sub, "topic", d.Topic)
		return nil
	}
	if err != nil {
		return fmt.Errorf("queue: appending a delivery for subscription %s: %w", sub, err)
	}
	return nil
}

// Head returns the oldest delivery still queued for sub.
func (o *HubOutbox) Head(ctx context.Context, sub string) (websub.Delivery, bool, error) {
	subj, err := hubOutSubject(sub)
	if err != nil {
		return websub.Delivery{}, false, err
	}
	m, err := o.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subj))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return websub.Delivery{}, false, nil
	}
	if err != nil {
		return websub.Delivery{}, false, fmt.Errorf("queue: reading the queue of subscription %s: %w", sub, err)
	}
	return websub.Delivery{Seq: m.Sequence, Topic: m.Header.Get(headerTopic), Payload: m.Data, Links: decodeLinks(m.Header.Get(headerLinks))}, true, nil
}

// Ack deletes delivery seq; one already gone is not an error.
func (o *HubOutbox) Ack(ctx context.Context, sub string, seq uint64) error {
	err := o.stream.DeleteMsg(ctx, seq)
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) && !isNoMsg(err) {
		return fmt.Errorf("queue: acknowledging delivery %d of subscription %s: %w", seq, sub, err)
	}
	return nil
}

// isNoMsg recognises the "no message found" answer some servers give to
// deleting a message that is gone.
func isNoMsg(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == errCodeNoMessage || apiErr.ErrorCode == errCodeSeqNotFound
	}
	return strings.Contains(err.Error(), "no message found") || strings.Contains(err.Error(), "not found")
}

// Purge drops sub's whole queue.
func (o *HubOutbox) Purge(ctx context.Context, sub string) error {
	subj, err := hubOutSubject(sub)
	if err != nil {
		return err
	}
	if err := o.stream.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
		return fmt.Errorf("queue: purging the queue of subscription %s: %w", sub, err)
	}
	return nil
}

// Len is how many deliveries are queued for sub, for tests and status.
func (o *HubOutbox) Len(ctx context.Context, sub string) (uint64, error) {
	subj, err := hubOutSubject(sub)
	if err != nil {
		return 0, err
	}
	info, err := o.stream.Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		return 0, fmt.Errorf("queue: counting the queue of subscription %s: %w", sub, err)
	}
	return info.State.Subjects[subj], nil
}

// errCodeStoreFailed is JetStream's error code for a message the stream
// would not store (a limit with DiscardNew).
const errCodeStoreFailed jetstream.ErrorCode = 10077

// errCodeNoMessage and errCodeSeqNotFound are its codes for deleting a
// sequence that holds no message (deleted already, or past the last).
const (
	errCodeNoMessage   jetstream.ErrorCode = 10057
	errCodeSeqNotFound jetstream.ErrorCode = 10043
)
