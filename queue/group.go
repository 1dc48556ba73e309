package queue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/viaduct-mirror/viaduct"
)

// Change groups. PublishChanges stores a batch's changes of one Source in
// messages of up to GroupMax changes each (a group), rather than one
// message a change: a JetStream message costs its publish, its
// acknowledgement, its delivery, its ack and its removal whatever it
// holds: grouping took a fifth or so off a node's CPU in a baseline
// (docs/benchmarks.md). The workers still see one ChangeMsg a change:
// ChangeStream hands a group's members out one by one, and each member
// has a verdict of its own. A group is acked once every member has its
// verdict; a member that must come back later (Nak) is queued again as a
// change of its own, carrying its deliveries so far and the time before
// which it is not to be handled; a member that is dead-lettered becomes
// a dead letter of its own. A group not acked in time (its worker died)
// is delivered again whole, and its members already handled are absorbed
// as any repeat is (docs/design.md).
const (
	// HeaderChanges marks a group and says how many changes it holds; its
	// body is their encodings, one a line.
	HeaderChanges = "Viaduct-Changes"
	// HeaderDeliveredBefore is, on a change queued again out of a group,
	// how many times it had been delivered in the group.
	HeaderDeliveredBefore = "Viaduct-Delivered-Before"
	// HeaderNotBefore is, on a change queued again out of a group, the
	// time (RFC 3339) before which it is not to be handled: the delay its
	// worker asked for.
	HeaderNotBefore = "Viaduct-Not-Before"
)

// GroupMax is the most changes one CHANGES message holds. A group is
// handed out by one pull and held, with its ack timer running, until its
// last member has a verdict, so it stays small beside the workers.
const GroupMax = 32

// changeGroup is one delivery of a group: its message, and how many of
// its members still wait for a verdict.
type changeGroup struct {
	msg  jetstream.Msg
	left atomic.Int32
}

// settle counts m's verdict in its group, once however often it is
// given; the last member's acks the group.
func (m *ChangeMsg) settle() error {
	if m.settled.Swap(true) {
		return nil
	}
	g := m.group
	if g.left.Add(-1) != 0 {
		return nil
	}
	if err := g.msg.Ack(); err != nil {
		return fmt.Errorf("queue: ack group %s: %w", g.msg.Subject(), err)
	}
	return nil
}

// groupID is the de-duplication id of a group: a digest of its members'
// ids, so that a batch queued again whole (its publish was retried) is
// stored once.
func groupID(cs []*viaduct.Change) string {
	h := sha256.New()
	for _, c := range cs {
		h.Write([]byte(c.MsgID()))
		h.Write([]byte{'\n'})
	}
	var sum [sha256.Size]byte
	return "grp-" + base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}

// GroupMaxBytes bounds the encodings in one group, far below NATS's
// default max_payload of 1 MiB: a change with many mirrors or a long URI
// runs to kilobytes. A change larger than this is a message of its own.
const GroupMaxBytes = 128 << 10

// cutGroup encodes the changes that go into the next message: from the
// first on, those of its Source (its subject), up to GroupMax of them and
// GroupMaxBytes of encodings, one a line.
func cutGroup(cs []*viaduct.Change) (n int, data []byte, err error) {
	for n < len(cs) && n < GroupMax && cs[n].Source == cs[0].Source {
		b, err := cs[n].Encode()
		if err != nil {
			return 0, nil, fmt.Errorf("encode change of %s from source %q: %w", cs[n].URI, cs[n].Source, err)
		}
		if n > 0 {
			if len(data)+1+len(b) > GroupMaxBytes {
				break
			}
			data = append(data, '\n')
		}
		data = append(data, b...)
		n++
	}
	return n, data, nil
}

// isGroup reports whether a CHANGES message's headers mark a group.
func isGroup(h nats.Header) bool { return h.Get(HeaderChanges) != "" }

// groupLines splits a group's body into its members' encodings.
func groupLines(data []byte) [][]byte { return bytes.Split(data, []byte{'\n'}) }

// openGroup turns one delivery of a group into its members. A member that
// does not decode is dead-lettered on its own and counted done.
func (q *Queue) openGroup(msg jetstream.Msg, meta *jetstream.MsgMetadata) ([]*ChangeMsg, error) {
	lines := groupLines(msg.Data())
	g := &changeGroup{msg: msg}
	g.left.Store(int32(len(lines)))
	var out []*ChangeMsg
	for i, line := range lines {
		m := &ChangeMsg{Seq: meta.Sequence.Stream, Delivered: meta.NumDelivered, Published: meta.Timestamp, q: q, msg: msg, group: g, member: i, raw: line}
		var c viaduct.Change
		if err := c.Decode(line); err != nil {
			reason := fmt.Sprintf("decode change: %v", err)
			q.log.Warn("dead-lettering undecodable change of a group", "subject", msg.Subject(), "seq", m.Seq, "member", i, "err", err)
			if err := m.DeadLetter(context.Background(), reason, nil); err != nil {
				return nil, err
			}
			continue
		}
		m.Change = &c
		out = append(out, m)
	}
	return out, nil
}

// requeue queues a group's member again as a change of its own, to be
// handled no earlier than delay from now, and counts its verdict in the
// group. Its id is the change's own with the deliveries so far, so that a
// repeat of this requeue is stored once and a later one is not taken for
// it.
func (m *ChangeMsg) requeue(delay time.Duration) error {
	if m.settled.Load() {
		return nil // it has its verdict
	}
	msg := nats.NewMsg(m.msg.Subject())
	msg.Data = m.raw
	for k, v := range m.msg.Headers() {
		if k != HeaderChanges && !isServerHeader(k) {
			msg.Header[k] = v
		}
	}
	msg.Header.Set(HeaderDeliveredBefore, strconv.FormatUint(m.Delivered, 10))
	if delay > 0 {
		msg.Header.Set(HeaderNotBefore, time.Now().Add(delay).UTC().Format(time.RFC3339Nano))
	}
	id := m.Change.MsgID() + "|" + strconv.FormatUint(m.Delivered, 10)
	if _, err := m.q.publishMsg(context.Background(), StreamChanges, msg, id); err != nil {
		return fmt.Errorf("queue: hand back change %d/%d (%s): %w", m.Seq, m.member, m.uri(), err)
	}
	return m.settle()
}

// notBefore reads a requeued change's headers: how long it must still
// wait (0: it may be handled now), and how many deliveries it had before
// this message. The first delivery of a change that must wait is spent on
// handing it back with that delay, and is not counted.
func notBefore(h nats.Header, delivered uint64) (wait time.Duration, total uint64) {
	before, _ := strconv.ParseUint(h.Get(HeaderDeliveredBefore), 10, 64)
	total = before + delivered
	nb := h.Get(HeaderNotBefore)
	if nb == "" {
		return 0, total
	}
	if total > before+1 {
		total-- // the delivery spent waiting
	}
	t, err := time.Parse(time.RFC3339Nano, nb)
	if err != nil {
		return 0, total
	}
	// A few milliseconds early (another node's clock, the server's timer)
	// is on time.
	if wait = time.Until(t); wait < 20*time.Millisecond {
		wait = 0
	}
	return wait, total
}
