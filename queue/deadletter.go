package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of a dead letter. Its body is the original payload, unchanged,
// so that an operator can fix the cause and publish it again as it was.
const (
	HeaderReason    = "Viaduct-Reason"
	HeaderEvidence  = "Viaduct-Evidence" // JSON object of strings
	HeaderSubject   = "Viaduct-Subject"  // where the message was
	HeaderStream    = "Viaduct-Stream"
	HeaderSeq       = "Viaduct-Seq"
	HeaderDelivered = "Viaduct-Delivered"
	// HeaderMember is, for a change that came in a group, its place there.
	HeaderMember = "Viaduct-Member"
)

// DeadLetter moves the change to DEADLETTER, on dead.changes.<source>,
// with the reason and the evidence (expected and actual hash, HTTP
// status, ...), then terminates it so it is not delivered again. The dead
// letter is published first: a crash in between leaves the change queued,
// and publishing it again is recognised as a duplicate.
//
// Unlike Ack, the termination waits for the server's confirmation: when
// DeadLetter returns, the consumer will not deliver the change again and,
// on a single server, it is off CHANGES, so whoever reads the queue's
// state next (an operator retrying the dead letter, a harvester's pass
// queueing it again, a count of the work left) finds it in one place only
// (in a cluster the stream's leader removes it moments later). The wait
// is bounded as every request to the server is (Queue.request). Dead
// letters are rare; the round trip costs nothing a baseline notices.
func (m *ChangeMsg) DeadLetter(ctx context.Context, reason string, evidence map[string]string) error {
	if m.group != nil {
		return m.deadMember(ctx, reason, evidence)
	}
	h := deadHeaders(m.msg.Headers(), m.msg.Subject(), StreamChanges, m.Seq, m.Delivered, reason, evidence)
	if err := m.q.publishDead(ctx, StreamChanges, m.msg.Subject(), m.Seq, h, m.msg.Data()); err != nil {
		return fmt.Errorf("queue: dead-letter change %d (%s): %w", m.Seq, m.uri(), err)
	}
	if err := m.term(ctx, oneLine(reason)); err != nil {
		return fmt.Errorf("queue: terminate dead-lettered change %d (%s): %w", m.Seq, m.uri(), err)
	}
	m.q.log.Warn("change dead-lettered", "source", m.sourceName(), "uri", m.uri(), "seq", m.Seq, "reason", reason)
	return nil
}

// deadMember dead-letters a group's member on its own: its dead letter
// holds its change alone, and its verdict counts in the group.
func (m *ChangeMsg) deadMember(ctx context.Context, reason string, evidence map[string]string) error {
	if m.settled.Load() {
		return nil // it has its verdict
	}
	h := deadHeaders(m.msg.Headers(), m.msg.Subject(), StreamChanges, m.Seq, m.Delivered, reason, evidence)
	if err := m.q.publishDeadMember(ctx, m.msg.Subject(), m.Seq, m.member, h, m.raw); err != nil {
		return fmt.Errorf("queue: dead-letter change %d/%d (%s): %w", m.Seq, m.member, m.uri(), err)
	}
	if err := m.settle(); err != nil {
		return err
	}
	m.q.log.Warn("change dead-lettered", "source", m.sourceName(), "uri", m.uri(), "seq", m.Seq, "member", m.member, "reason", reason)
	return nil
}

// term terminates the delivery with reason and waits for the server to
// confirm it, as the client's DoubleAck does for an ack: the server answers
// an acknowledgement sent as a request once it has taken it (in a cluster,
// once the consumer's group has).
func (m *ChangeMsg) term(ctx context.Context, reason string) error {
	reply := m.msg.Reply()
	if reply == "" {
		return errors.New("the message has no reply subject")
	}
	body := "+TERM"
	if reason != "" {
		body += " " + reason
	}
	ctx, cancel := m.q.request(ctx)
	defer cancel()
	_, err := m.q.nc.RequestWithContext(ctx, reply, []byte(body))
	return err
}

func (m *ChangeMsg) sourceName() string {
	if m.Change != nil {
		return m.Change.Source
	}
	name, _ := SubjectName(m.msg.Subject())
	return name
}

// deadHeaders builds the headers of a dead letter, keeping the original's
// own headers (trace context) and dropping the server's (its
// de-duplication id, and the sequence and stream a direct get adds).
func deadHeaders(orig nats.Header, subject, stream string, seq, delivered uint64, reason string, evidence map[string]string) nats.Header {
	h := nats.Header{}
	for k, v := range orig {
		if !isServerHeader(k) {
			h[k] = v
		}
	}
	h.Set(HeaderReason, oneLine(reason))
	if len(evidence) > 0 {
		ev, _ := json.Marshal(evidence) // a map of strings always encodes, on one line
		h.Set(HeaderEvidence, string(ev))
	}
	h.Set(HeaderSubject, subject)
	h.Set(HeaderStream, stream)
	h.Set(HeaderSeq, strconv.FormatUint(seq, 10))
	h.Set(HeaderDelivered, strconv.FormatUint(delivered, 10))
	return h
}

// publishDead stores a dead letter, de-duplicated by the original's
// stream and sequence so each message is dead-lettered once.
func (q *Queue) publishDead(ctx context.Context, stream, subject string, seq uint64, h nats.Header, data []byte) error {
	return q.publishDeadID(ctx, stream, subject, deadID(stream, seq), h, data)
}

// deadID is the message id of the dead letter of stream's message seq.
func deadID(stream string, seq uint64) string {
	return "dead|" + stream + "|" + strconv.FormatUint(seq, 10)
}

// publishDeadMember stores the dead letter of the change at place member
// of the group seq on CHANGES, whose encoding is data: a dead letter of
// its own, with the group's dead-letter headers h less the group's mark.
func (q *Queue) publishDeadMember(ctx context.Context, subject string, seq uint64, member int, h nats.Header, data []byte) error {
	mh := nats.Header{}
	for k, v := range h {
		if k != HeaderChanges {
			mh[k] = v
		}
	}
	mh.Set(HeaderMember, strconv.Itoa(member))
	return q.publishDeadID(ctx, StreamChanges, subject, deadID(StreamChanges, seq)+"|"+strconv.Itoa(member), mh, data)
}

// publishDeadID stores a dead letter under the message id id.
func (q *Queue) publishDeadID(ctx context.Context, stream, subject, id string, h nats.Header, data []byte) error {
	msg := &nats.Msg{Subject: deadSubject(subject), Header: h, Data: data}
	ack, err := q.publishMsg(ctx, StreamDead, msg, id)
	if err != nil {
		return err
	}
	if !ack.Duplicate {
		q.metrics.deadLettered.WithLabelValues(stream).Inc()
	}
	return nil
}

// isServerHeader reports whether a header belongs to the NATS server or
// client (Nats-Msg-Id, Nats-Sequence, ...) rather than to the message.
func isServerHeader(k string) bool {
	return strings.HasPrefix(k, "Nats-")
}

// oneLine keeps a reason usable as a header value.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// DeadLetter is one message an operator must look at.
type DeadLetter struct {
	// Seq is the dead letter's own sequence on DEADLETTER.
	Seq uint64
	// At is when it was dead-lettered.
	At time.Time
	// Subject is where the message was (changes.<source>), and Source the
	// Source it names.
	Subject string
	Source  string
	// Stream and OrigSeq locate the original message.
	Stream  string
	OrigSeq uint64
	// Delivered is how many times it had been delivered.
	Delivered uint64
	// Retries is how many times the change had already been taken out of
	// DEADLETTER and queued again before it failed this time.
	Retries  int
	Reason   string
	Evidence map[string]string
	// Payload is the original message body.
	Payload []byte

	header nats.Header // the original's headers, for a retry
}

// DeadLetters returns up to limit dead letters, oldest first.
func (q *Queue) DeadLetters(ctx context.Context, limit int) ([]DeadLetter, error) {
	return q.ListDeadLetters(ctx, DeadQuery{Limit: limit})
}

// Kind is the reason's fixed first word, for grouping dead letters: the
// fetch workers' kinds (mismatch, not_found, forbidden, too_large,
// truncated, transient, upstream, interrupted), "undecodable" for a
// message that is not a change, "no_verdict" for one that ran out of
// deliveries without a worker's verdict, "other" for anything else.
func (d DeadLetter) Kind() string {
	switch {
	case strings.HasPrefix(d.Reason, "decode change"):
		return "undecodable"
	case strings.HasPrefix(d.Reason, "no verdict"):
		return "no_verdict"
	}
	word, _, ok := strings.Cut(d.Reason, ":")
	if !ok || word == "" || strings.IndexFunc(word, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_') }) >= 0 {
		return "other"
	}
	return word
}

func parseDeadLetter(raw *jetstream.RawStreamMsg) DeadLetter {
	h := raw.Header
	d := DeadLetter{
		Seq:     raw.Sequence,
		At:      raw.Time,
		Subject: h.Get(HeaderSubject),
		Stream:  h.Get(HeaderStream),
		Reason:  h.Get(HeaderReason),
		Payload: raw.Data,
		header:  h,
	}
	d.Source, _ = SubjectName(d.Subject)
	d.Retries, _ = strconv.Atoi(h.Get(HeaderRetries))
	d.OrigSeq, _ = strconv.ParseUint(h.Get(HeaderSeq), 10, 64)
	d.Delivered, _ = strconv.ParseUint(h.Get(HeaderDelivered), 10, 64)
	if ev := h.Get(HeaderEvidence); ev != "" {
		if err := json.Unmarshal([]byte(ev), &d.Evidence); err != nil {
			d.Evidence = map[string]string{"unparsed": ev}
		}
	}
	return d
}
