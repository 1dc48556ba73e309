package queue

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// StreamSnapshot describes one stream's snapshot as JetStream took it: the
// stream's configuration and state when it began, which a restore hands
// back to the server as they were, and the size of the archive.
type StreamSnapshot struct {
	Stream string          `json:"stream"`
	Config json.RawMessage `json:"config"`
	State  json.RawMessage `json:"state"`
	Bytes  int64           `json:"bytes"`
}

// snapshotChunkWait bounds the wait for the next chunk of a snapshot: the
// server sends them as fast as it reads its store.
const snapshotChunkWait = time.Minute

// BackupStreams names every stream of the account (viaduct's streams and
// buckets, and any other) in the order a consistent backup takes them,
// but for the leases bucket: a lease says which running process harvests
// a Source, and no process of the backup runs after a restore, so a
// restored lease would only keep the restored node from its Sources until
// it expired. The positions (cursors), which say where each Source's
// harvest is, are kept.
// Each later one only ever receives what the earlier ones had already
// recorded, so a copy that misses a message in flight keeps its cause,
// which is done again after a restore and absorbed downstream as any
// repeat is: the buckets (a harvester cursor moves only after its changes
// are in CHANGES) before CHANGES; CHANGES (a change leaves it only once
// its event or dead letter is stored) before DEADLETTER and EVENTS. The
// catalog is copied before all of them, so that EVENTS holds at least
// every event it had applied.
func (q *Queue) BackupStreams(ctx context.Context) ([]string, error) {
	var names []string
	l := q.js.StreamNames(ctx)
	for n := range l.Name() {
		if n != "KV_"+BucketLeases {
			names = append(names, n)
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("queue: list streams: %w", err)
	}
	rank := func(name string) int {
		switch {
		case strings.HasPrefix(name, "KV_"):
			return 0
		case name == StreamChanges:
			return 2
		case name == StreamHubOut:
			return 3
		case name == StreamDead:
			return 4
		case name == StreamEvents:
			return 5
		}
		return 1
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b)) })
	return names, nil
}

// snapshotResponse is the server's answer to a snapshot request.
type snapshotResponse struct {
	Error  *server.ApiError `json:"error"`
	Config json.RawMessage  `json:"config"`
	State  json.RawMessage  `json:"state"`
}

// SnapshotStream writes JetStream's own snapshot of the stream (its
// messages with their sequences and times, and its consumers' state) to
// w, through the server's snapshot API: the one way to copy a stream a
// restore gives back with the same sequences, which the catalog's
// position in EVENTS depends on. The server checks every message's
// checksum first.
func (q *Queue) SnapshotStream(ctx context.Context, name string, w io.Writer) (StreamSnapshot, error) {
	where := "queue: snapshot stream " + name
	inbox := q.nc.NewInbox()
	sub, err := q.nc.SubscribeSync(inbox)
	if err != nil {
		return StreamSnapshot{}, fmt.Errorf("%s: %w", where, err)
	}
	defer sub.Unsubscribe()
	// A chunk held in the subscription's buffer waits for this reader.
	sub.SetPendingLimits(-1, 64<<20)
	req, err := json.Marshal(server.JSApiStreamSnapshotRequest{DeliverSubject: inbox, CheckMsgs: true})
	if err != nil {
		return StreamSnapshot{}, fmt.Errorf("%s: %w", where, err)
	}
	rctx, cancel := context.WithTimeout(ctx, snapshotChunkWait)
	msg, err := q.nc.RequestWithContext(rctx, fmt.Sprintf(server.JSApiStreamSnapshotT, name), req)
	cancel()
	if err != nil {
		return StreamSnapshot{}, fmt.Errorf("%s: request: %w", where, err)
	}
	var resp snapshotResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return StreamSnapshot{}, fmt.Errorf("%s: reading the answer: %w", where, err)
	}
	if resp.Error != nil {
		return StreamSnapshot{}, fmt.Errorf("%s: %w", where, resp.Error)
	}
	snap := StreamSnapshot{Stream: name, Config: resp.Config, State: resp.State}
	for {
		cctx, cancel := context.WithTimeout(ctx, snapshotChunkWait)
		m, err := sub.NextMsgWithContext(cctx)
		cancel()
		if err != nil {
			return StreamSnapshot{}, fmt.Errorf("%s: waiting for chunk after %d bytes: %w", where, snap.Bytes, err)
		}
		if len(m.Data) == 0 {
			// The last message: a status of 204 when every chunk was
			// sent, else what went wrong.
			if st := m.Header.Get("Status"); st != "" && st != "204" {
				return StreamSnapshot{}, fmt.Errorf("%s: server ended the snapshot after %d bytes: %s %s", where, snap.Bytes, st, m.Header.Get("Description"))
			}
			return snap, nil
		}
		n, err := w.Write(m.Data)
		snap.Bytes += int64(n)
		if err != nil {
			return StreamSnapshot{}, fmt.Errorf("%s: writing: %w", where, err)
		}
		// The reply acknowledges the chunk: the server keeps a window
		// of unacknowledged ones in flight.
		if m.Reply != "" {
			if err := q.nc.Publish(m.Reply, nil); err != nil {
				return StreamSnapshot{}, fmt.Errorf("%s: acknowledging a chunk: %w", where, err)
			}
		}
	}
}
