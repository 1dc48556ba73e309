package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// restoreChunk is the size of each piece of an archive sent to the
// server: its default snapshot chunk, well under NATS's payload limit.
const restoreChunk = 128 << 10

// restoreWait bounds the server's answer to a chunk, and restoreEnd its
// answer to the end of an archive, when it builds the stream from it.
const (
	restoreWait = time.Minute
	restoreEnd  = 30 * time.Minute
)

// restoreResponse is the server's answer to a restore request and to the
// end of the archive.
type restoreResponse struct {
	Error          *server.ApiError `json:"error"`
	DeliverSubject string           `json:"deliver_subject"`
}

// RestoreStreams starts the embedded server of cfg on its store directory,
// which must hold no stream yet, gives each snapshot back to it with
// JetStream's restore (open reads one archive), and stops it. The streams
// come back with their sequences, times and consumers: a node started
// afterwards finds them as the backed-up node left them.
func RestoreStreams(ctx context.Context, cfg Config, log *slog.Logger, snaps []StreamSnapshot, open func(StreamSnapshot) (io.ReadCloser, error)) error {
	if !cfg.Embedded() {
		return errors.New("queue: restore streams: queue.url names an external NATS; streams are restored into the embedded server only")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv, err := startServer(ctx, &cfg, log, nil)
	if err != nil {
		return err
	}
	defer func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}()
	nc, err := nats.Connect(srv.ClientURL(), nats.InProcessServer(srv), nats.Name("viaduct restore"))
	if err != nil {
		return fmt.Errorf("queue: restore streams: connect: %w", err)
	}
	defer nc.Close()
	plain, reserved := reservedLast(snaps)
	for _, s := range plain {
		if err := restoreStream(ctx, nc, s, open); err != nil {
			return err
		}
		log.Info("stream restored", "stream", s.Stream, "bytes", s.Bytes)
	}
	// The leases bucket, which a backup leaves out, is made empty before
	// any reservation, as a node makes it.
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("queue: restore streams: %w", err)
	}
	if _, err := js.CreateKeyValue(ctx, bucketConfig(&cfg, BucketLeases)); err != nil {
		return fmt.Errorf("queue: restore streams: create bucket %s: %w", BucketLeases, err)
	}
	for _, s := range reserved {
		if err := restoreStream(ctx, nc, s, open); err != nil {
			return err
		}
		log.Info("stream restored", "stream", s.Stream, "bytes", s.Bytes)
	}
	return nil
}

// reservedLast splits the snapshots for a restore: streams that reserve
// their max_bytes of the store (the hub's outbox) go after those that do
// not, as a node creates them. A reservation taken first leaves too little
// of max_store for a stream without one, which needs room for what it
// holds.
func reservedLast(snaps []StreamSnapshot) (plain, reserved []StreamSnapshot) {
	for _, s := range snaps {
		var c struct {
			MaxBytes int64 `json:"max_bytes"`
		}
		if json.Unmarshal(s.Config, &c) == nil && c.MaxBytes > 0 {
			reserved = append(reserved, s)
		} else {
			plain = append(plain, s)
		}
	}
	return plain, reserved
}

// restoreStream sends one archive to the server's restore API.
func restoreStream(ctx context.Context, nc *nats.Conn, s StreamSnapshot, open func(StreamSnapshot) (io.ReadCloser, error)) error {
	where := "queue: restore stream " + s.Stream
	r, err := open(s)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	defer r.Close()
	req, err := json.Marshal(struct {
		Config json.RawMessage `json:"config"`
		State  json.RawMessage `json:"state"`
	}{s.Config, s.State})
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	resp, err := ask(ctx, nc, restoreWait, fmt.Sprintf(server.JSApiStreamRestoreT, s.Stream), req)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	buf := make([]byte, restoreChunk)
	var sent int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if _, err := ask(ctx, nc, restoreWait, resp.DeliverSubject, buf[:n]); err != nil {
				return fmt.Errorf("%s: after %d bytes: %w", where, sent, err)
			}
			sent += int64(n)
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%s: reading the archive after %d bytes: %w", where, sent, rerr)
		}
	}
	if sent != s.Bytes {
		return fmt.Errorf("%s: the archive holds %d bytes, the backup says %d", where, sent, s.Bytes)
	}
	// An empty message ends the archive; the answer comes once the
	// server has built the stream from it.
	if _, err := ask(ctx, nc, restoreEnd, resp.DeliverSubject, nil); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// ask sends one request and reads its answer, an error when it says one.
func ask(ctx context.Context, nc *nats.Conn, wait time.Duration, subject string, data []byte) (restoreResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return restoreResponse{}, err
	}
	var resp restoreResponse
	if len(m.Data) == 0 {
		return resp, nil
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return resp, fmt.Errorf("reading the server's answer: %w", err)
	}
	if resp.Error != nil {
		return resp, resp.Error
	}
	return resp, nil
}
