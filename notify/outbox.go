package notify

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

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/websub"
)

// headerTopic carries a delivery's topic in HUBOUT; the payload is the
// body.
const headerTopic = "Viaduct-Topic"

// HubOutbox is a websub.Outbox on JetStream: stream HUBOUT (declared by
// queue.HubOutStream), one subject per subscription. A delivery's Seq is
// its stream sequence, and acknowledging it deletes the message, so the
// head of a subscriber's queue is simply its first message. Appends carry
// a Nats-Msg-Id derived from the subscription and the payload, so that a
// notification queued again after a crash (or by a retried Publish)
// within the duplicate window is stored once.
type HubOutbox struct {
	stream jetstream.Stream
	js     jetstream.JetStream
	log    *slog.Logger
}

var _ websub.Outbox = (*HubOutbox)(nil)

// OpenHubOutbox creates or updates the HUBOUT stream of q and returns the
// Outbox on it.
func OpenHubOutbox(ctx context.Context, q *queue.Queue, cfg queue.HubOutConfig, log *slog.Logger) (*HubOutbox, error) {
	s, err := q.HubOutStream(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &HubOutbox{stream: s, js: q.JetStream(), log: log}, nil
}

func hubOutSubject(sub string) (string, error) {
	if sub == "" || strings.ContainsAny(sub, ".*> \t\r\n") {
		return "", fmt.Errorf("notify: %q is not a subscription id", sub)
	}
	return queue.HubOutPrefix + sub, nil
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
		return fmt.Errorf("notify: appending a delivery for subscription %s: %w", sub, err)
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
		return websub.Delivery{}, false, fmt.Errorf("notify: reading the queue of subscription %s: %w", sub, err)
	}
	return websub.Delivery{Seq: m.Sequence, Topic: m.Header.Get(headerTopic), Payload: m.Data, Links: decodeLinks(m.Header.Get(headerLinks))}, true, nil
}

// Ack deletes delivery seq; one already gone is not an error.
func (o *HubOutbox) Ack(ctx context.Context, sub string, seq uint64) error {
	err := o.stream.DeleteMsg(ctx, seq)
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) && !isNoMsg(err) {
		return fmt.Errorf("notify: acknowledging delivery %d of subscription %s: %w", seq, sub, err)
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
		return fmt.Errorf("notify: purging the queue of subscription %s: %w", sub, err)
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
		return 0, fmt.Errorf("notify: counting the queue of subscription %s: %w", sub, err)
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
