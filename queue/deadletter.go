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
)

// DeadLetter moves the change to DEADLETTER, on dead.changes.<source>,
// with the reason and the evidence (expected and actual hash, HTTP
// status, ...), then terminates it so it is not delivered again. The dead
// letter is published first: a crash in between leaves the change queued,
// and publishing it again is recognised as a duplicate.
func (m *ChangeMsg) DeadLetter(ctx context.Context, reason string, evidence map[string]string) error {
	h := deadHeaders(m.msg.Headers(), m.msg.Subject(), StreamChanges, m.Seq, m.Delivered, reason, evidence)
	if err := m.q.publishDead(ctx, StreamChanges, m.msg.Subject(), m.Seq, h, m.msg.Data()); err != nil {
		return fmt.Errorf("queue: dead-letter change %d (%s): %w", m.Seq, m.uri(), err)
	}
	if err := m.msg.TermWithReason(oneLine(reason)); err != nil {
		return fmt.Errorf("queue: terminate dead-lettered change %d (%s): %w", m.Seq, m.uri(), err)
	}
	m.q.log.Warn("change dead-lettered", "source", m.sourceName(), "uri", m.uri(), "seq", m.Seq, "reason", reason)
	return nil
}

func (m *ChangeMsg) sourceName() string {
	if m.Change != nil {
		return m.Change.Source
	}
	name, _ := SubjectName(m.msg.Subject())
	return name
}

// deadHeaders builds the headers of a dead letter, keeping the original's
// own headers (trace context) and dropping its de-duplication id.
func deadHeaders(orig nats.Header, subject, stream string, seq, delivered uint64, reason string, evidence map[string]string) nats.Header {
	h := nats.Header{}
	for k, v := range orig {
		if k != jetstream.MsgIDHeader {
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
	msg := &nats.Msg{Subject: deadSubject(subject), Header: h, Data: data}
	ack, err := q.publishMsg(ctx, StreamDead, msg, "dead|"+stream+"|"+strconv.FormatUint(seq, 10))
	if err != nil {
		return err
	}
	if !ack.Duplicate {
		q.metrics.deadLettered.WithLabelValues(stream).Inc()
	}
	return nil
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
	// Subject is where the message was (changes.<source>).
	Subject string
	// Stream and OrigSeq locate the original message.
	Stream  string
	OrigSeq uint64
	// Delivered is how many times it had been delivered.
	Delivered uint64
	Reason    string
	Evidence  map[string]string
	// Payload is the original message body.
	Payload []byte
}

// DeadLetters returns up to limit dead letters, oldest first.
func (q *Queue) DeadLetters(ctx context.Context, limit int) ([]DeadLetter, error) {
	info, err := q.dead.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue: read %s state: %w", StreamDead, err)
	}
	var out []DeadLetter
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && len(out) < limit && seq > 0; seq++ {
		raw, err := q.dead.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("queue: read dead letter %d: %w", seq, err)
		}
		out = append(out, parseDeadLetter(raw))
	}
	return out, nil
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
	}
	d.OrigSeq, _ = strconv.ParseUint(h.Get(HeaderSeq), 10, 64)
	d.Delivered, _ = strconv.ParseUint(h.Get(HeaderDelivered), 10, 64)
	if ev := h.Get(HeaderEvidence); ev != "" {
		if err := json.Unmarshal([]byte(ev), &d.Evidence); err != nil {
			d.Evidence = map[string]string{"unparsed": ev}
		}
	}
	return d
}
