package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// HeaderRetries counts how many times a change was taken out of
// DEADLETTER and queued again. It travels with the change, so a change
// that fails again carries the count into its next dead letter, and an
// automatic retry can stop after a few rounds.
const HeaderRetries = "Viaduct-Retries"

// ErrDeadLetterNotFound is returned for a dead-letter sequence that
// DEADLETTER does not hold (never existed, retried or purged).
var ErrDeadLetterNotFound = errors.New("no such dead letter")

// DeadQuery selects dead letters to list.
type DeadQuery struct {
	// Source keeps only the dead letters of this Source; empty means all.
	Source string
	// After starts the list after this DEADLETTER sequence, for paging.
	After uint64
	// Limit caps how many are returned; 0 or less means 100.
	Limit int
}

// deadFilter is the DEADLETTER subject filter for source ("" = all).
func deadFilter(source string) string {
	if source == "" {
		return deadPrefix + ">"
	}
	return deadSubject(ChangeSubject(source))
}

// ListDeadLetters returns the dead letters q selects, oldest first. Each
// read skips straight to the next matching message, so a Source's few
// dead letters among many others cost one request each.
func (q *Queue) ListDeadLetters(ctx context.Context, query DeadQuery) ([]DeadLetter, error) {
	limit := query.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []DeadLetter
	err := q.eachDeadLetter(ctx, query.Source, query.After+1, 0, func(d DeadLetter) bool {
		out = append(out, d)
		return len(out) < limit
	})
	return out, err
}

// eachDeadLetter calls fn with every dead letter of source from sequence
// from up to last (0: no end) until fn returns false.
func (q *Queue) eachDeadLetter(ctx context.Context, source string, from, last uint64, fn func(DeadLetter) bool) error {
	filter := deadFilter(source)
	for seq := max(from, 1); last == 0 || seq <= last; {
		rctx, cancel := q.request(ctx)
		raw, err := q.dead.GetMsg(rctx, seq, jetstream.WithGetMsgSubject(filter))
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("queue: read dead letters from %d (%s): %w", seq, filter, err)
		}
		if raw.Sequence < seq {
			return fmt.Errorf("queue: read dead letters from %d (%s): the server answered with %d", seq, filter, raw.Sequence)
		}
		if last != 0 && raw.Sequence > last {
			return nil
		}
		if !fn(parseDeadLetter(raw)) {
			return nil
		}
		seq = raw.Sequence + 1
	}
	return nil
}

// DeadLetterAt returns one dead letter by its DEADLETTER sequence.
func (q *Queue) DeadLetterAt(ctx context.Context, seq uint64) (DeadLetter, error) {
	raw, err := q.dead.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetter{}, fmt.Errorf("queue: dead letter %d: %w", seq, ErrDeadLetterNotFound)
	}
	if err != nil {
		return DeadLetter{}, fmt.Errorf("queue: read dead letter %d: %w", seq, err)
	}
	return parseDeadLetter(raw), nil
}

// RetryDeadLetter queues the dead letter's change again, as it was, on its
// original subject, with a fresh count of deliveries, then removes the
// dead letter. The change is published first and de-duplicated by the
// dead letter's sequence: a crash in between leaves the dead letter, and
// retrying it again within the duplicate window queues nothing new.
func (q *Queue) RetryDeadLetter(ctx context.Context, seq uint64) (DeadLetter, error) {
	d, err := q.DeadLetterAt(ctx, seq)
	if err != nil {
		return DeadLetter{}, err
	}
	if err := q.retry(ctx, d); err != nil {
		return DeadLetter{}, err
	}
	return d, nil
}

// RetryDeadLetters retries every dead letter of source (empty: all) that
// exists when it starts, and returns how many it queued again. A retried
// change that fails again comes back with a later sequence and is not
// retried a second time by the same call.
func (q *Queue) RetryDeadLetters(ctx context.Context, source string) (int, error) {
	info, err := q.dead.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("queue: read %s state: %w", StreamDead, err)
	}
	last := info.State.LastSeq
	if info.State.Msgs == 0 {
		return 0, nil
	}
	n := 0
	var retryErr error
	err = q.eachDeadLetter(ctx, source, info.State.FirstSeq, last, func(d DeadLetter) bool {
		if retryErr = q.retry(ctx, d); retryErr != nil {
			return false
		}
		n++
		return true
	})
	if err == nil {
		err = retryErr
	}
	return n, err
}

func (q *Queue) retry(ctx context.Context, d DeadLetter) error {
	if d.Stream != StreamChanges || !strings.HasPrefix(d.Subject, changesPrefix) {
		return fmt.Errorf("queue: retry dead letter %d: it came from %q on %q, and only %s changes can be queued again", d.Seq, d.Stream, d.Subject, StreamChanges)
	}
	msg := &nats.Msg{Subject: d.Subject, Header: retryHeaders(d), Data: d.Payload}
	id := "retry|" + strconv.FormatUint(d.Seq, 10) + "|" + d.Stream + "|" + strconv.FormatUint(d.OrigSeq, 10)
	if _, err := q.publishMsg(ctx, StreamChanges, msg, id); err != nil {
		return fmt.Errorf("queue: retry dead letter %d (source %q): queue its change again: %w", d.Seq, d.Source, err)
	}
	if err := q.deleteDead(ctx, d.Seq); err != nil && !q.deadGone(ctx, d.Seq) {
		return fmt.Errorf("queue: retry dead letter %d (source %q): remove it after queueing its change: %w", d.Seq, d.Source, err)
	}
	q.log.Debug("dead letter queued again", "source", d.Source, "seq", d.Seq, "retries", d.Retries+1)
	return nil
}

// retryHeaders are the original change's headers (trace context) without
// the dead letter's own, and with the retry count raised.
func retryHeaders(d DeadLetter) nats.Header {
	h := nats.Header{}
	for k, v := range d.header {
		if !strings.HasPrefix(k, "Viaduct-") && !isServerHeader(k) {
			h[k] = v
		}
	}
	h.Set(HeaderRetries, strconv.Itoa(d.Retries+1))
	return h
}

// PurgeDeadLetter removes one dead letter for good.
func (q *Queue) PurgeDeadLetter(ctx context.Context, seq uint64) error {
	if err := q.dead.DeleteMsg(ctx, seq); err != nil {
		// The server answers a delete of a missing message with a
		// generic failure: look before saying which.
		if q.deadGone(ctx, seq) {
			return fmt.Errorf("queue: purge dead letter %d: %w", seq, ErrDeadLetterNotFound)
		}
		return fmt.Errorf("queue: purge dead letter %d: %w", seq, err)
	}
	q.log.Info("dead letter purged", "seq", seq)
	return nil
}

// PurgeDeadLetters removes every dead letter of source (empty: all) that
// exists when it starts, and returns how many it removed. Dead letters
// that arrive meanwhile are kept for the operator to see.
func (q *Queue) PurgeDeadLetters(ctx context.Context, source string) (uint64, error) {
	counts, last, err := q.deadLetterCounts(ctx)
	if err != nil {
		return 0, err
	}
	if last == 0 {
		return 0, nil
	}
	opts := []jetstream.StreamPurgeOpt{jetstream.WithPurgeSequence(last + 1)}
	if source != "" {
		opts = append(opts, jetstream.WithPurgeSubject(deadFilter(source)))
	}
	if err := q.dead.Purge(ctx, opts...); err != nil {
		return 0, fmt.Errorf("queue: purge dead letters of %s: %w", describeSource(source), err)
	}
	n := counts[source]
	if source == "" {
		n = 0
		for _, c := range counts {
			n += c
		}
	}
	q.log.Info("dead letters purged", "source", source, "count", n)
	return n, nil
}

// DeadLetterCounts returns how many dead letters each Source has, read
// from the stream's per-subject counts without reading the letters.
func (q *Queue) DeadLetterCounts(ctx context.Context) (map[string]uint64, error) {
	counts, _, err := q.deadLetterCounts(ctx)
	return counts, err
}

// deadLetterCounts also returns the stream's last sequence, the snapshot
// the counts are of.
func (q *Queue) deadLetterCounts(ctx context.Context) (map[string]uint64, uint64, error) {
	info, err := q.dead.Info(ctx, jetstream.WithSubjectFilter(deadFilter("")))
	if err != nil {
		return nil, 0, fmt.Errorf("queue: count dead letters: %w", err)
	}
	out := make(map[string]uint64, len(info.State.Subjects))
	for subject, n := range info.State.Subjects {
		name, err := SubjectName(subject)
		if err != nil {
			name = subject
		}
		out[name] += n
	}
	return out, info.State.LastSeq, nil
}

// deadGone reports whether DEADLETTER no longer holds seq (another node
// retried or purged it first).
func (q *Queue) deadGone(ctx context.Context, seq uint64) bool {
	ctx, cancel := q.request(ctx)
	defer cancel()
	_, err := q.dead.GetMsg(ctx, seq)
	return errors.Is(err, jetstream.ErrMsgNotFound)
}

func describeSource(source string) string {
	if source == "" {
		return "every source"
	}
	return fmt.Sprintf("source %q", source)
}
