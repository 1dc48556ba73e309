package s3

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
)

// extractHeader asks the server to unpack a tar into an object for each of
// its files (MinIO's snowball auto-extract) instead of storing the tar.
const extractHeader = "X-Amz-Meta-Snowball-Auto-Extract"

// batchClockSkew is how far the time of an unpacked object may be from
// this node's clock. A server that dated the objects by the tar's header
// (all zero here) instead of by its own clock would make every blob look
// unreferenced for ages to a garbage collection (storage.Sweeper).
const batchClockSkew = time.Hour

// batcher sends the small blobs committed while a batch is under way
// together, as one tar: a commit joins the queue and, when a batch slot is
// free, a sender takes everything queued (up to Config.BatchBlobs) as its
// batch. A lone commit thus goes out at once, by itself, and commits that
// come while the server is busy go out together, one request for many
// blobs. A batch of one is an ordinary PUT.
//
// The server checks no digest of a tar it unpacks: what it read is known
// from the request's ETag, the md5 of the bytes it took in, which must be
// the md5 of the tar sent, and a HEAD of the batch's last blob shows the
// tar was unpacked, not stored as it is. A batch not confirmed both ways
// (or refused, or lost) is sent again blob by blob, each with its
// Content-MD5, so every blob ends stored and verified, or its commit
// fails: a blob the server unpacked wrongly is overwritten with the right
// bytes under the same key before its commit returns.
type batcher struct {
	s     *Store
	slots chan struct{} // a slot for each batch under way (Config.BatchesAtOnce)
	// on is cleared when the server is found storing a batch as it is:
	// the blobs queued then, and all after, go one by one.
	on atomic.Bool

	mu    sync.Mutex
	queue []*held

	// queued, when tests set it, is told the queue's length after each
	// commit joins it.
	queued func(int)
}

// held is a small blob waiting for its batch.
type held struct {
	ctx  context.Context // the commit's
	name string          // the object's name
	body []byte
	done chan error // the commit's outcome; buffered
}

func newBatcher(s *Store) *batcher {
	return &batcher{s: s, slots: make(chan struct{}, s.cfg.BatchesAtOnce)}
}

// probe sends a batch of one blob under the temporary prefix and reports
// why batches cannot be used with this server, or nil when they can.
func (b *batcher) probe(ctx context.Context) error {
	h := &held{ctx: ctx, name: b.s.tmpPrefix() + "probe-" + randomHex(), body: []byte("viaduct batch probe")}
	err := b.sendTar(ctx, []*held{h})
	if rerr := b.s.client.RemoveObject(ctx, b.s.cfg.Bucket, h.name, minio.RemoveObjectOptions{}); rerr != nil && err == nil {
		err = fmt.Errorf("removing the probe object %s: %w", h.name, rerr)
	}
	return err
}

// put stores body as the object name, in a batch when others are being
// committed, and returns once it is stored and verified.
func (b *batcher) put(ctx context.Context, name string, body []byte) error {
	h := &held{ctx: ctx, name: name, body: body, done: make(chan error, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, h)
	n := len(b.queue)
	b.mu.Unlock()
	if b.queued != nil {
		b.queued(n)
	}
	if b.acquire() {
		go b.run()
	}
	select {
	case err := <-h.done:
		return err
	case <-ctx.Done():
		// Taken out of the queue unless its batch is under way; then
		// the blob may still be stored, which no one will refer to.
		b.withdraw(h)
		return ctx.Err()
	}
}

func (b *batcher) acquire() bool {
	select {
	case b.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// run sends batches while blobs are queued, holding a slot.
func (b *batcher) run() {
	for {
		if batch := b.take(); len(batch) > 0 {
			b.send(batch)
			continue
		}
		<-b.slots
		// A commit queued after take looked, whose acquire found every
		// slot taken, is sent by this sender or by the one that took the
		// slot since.
		if !b.waiting() || !b.acquire() {
			return
		}
	}
}

// take removes the next batch from the queue: up to BatchBlobs blobs and,
// past the first, PartSize bytes.
func (b *batcher) take() []*held {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, size := 0, 0
	for n < len(b.queue) && n < b.s.cfg.BatchBlobs {
		size += len(b.queue[n].body)
		if n > 0 && uint64(size) > b.s.cfg.PartSize {
			break
		}
		n++
	}
	batch := make([]*held, n)
	copy(batch, b.queue)
	b.queue = b.queue[n:]
	if len(b.queue) == 0 {
		b.queue = nil // lets the backing array go
	}
	return batch
}

func (b *batcher) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) > 0
}

func (b *batcher) withdraw(h *held) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, q := range b.queue {
		if q == h {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return
		}
	}
}

// send stores a batch and tells each of its commits the outcome.
func (b *batcher) send(batch []*held) {
	if len(batch) > 1 && b.on.Load() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), b.s.stallAfter())
		err := b.sendTar(ctx, batch)
		cancel()
		b.s.m.batchBlobs.Observe(float64(len(batch)))
		if err == nil {
			b.s.m.batches.WithLabelValues(batchConfirmed).Inc()
			for _, h := range batch {
				h.done <- nil
			}
			return
		}
		b.s.m.batches.WithLabelValues(batchResent).Inc()
		b.s.log.Warn("a batch of small blobs was not confirmed; sending them one by one",
			"bucket", b.s.cfg.Bucket, "endpoint", b.s.cfg.Endpoint, "blobs", len(batch), "err", err)
	}
	var wg sync.WaitGroup
	for _, h := range batch {
		wg.Go(func() { h.done <- b.s.putOne(h.ctx, h.name, h.body) })
	}
	wg.Wait()
}

// sendTar sends the batch as one tar for the server to unpack and checks
// that it did (see batcher).
func (b *batcher) sendTar(ctx context.Context, batch []*held) error {
	s := b.s
	body, err := tarOf(batch)
	if err != nil {
		return err
	}
	sum := md5.Sum(body)
	want := hex.EncodeToString(sum[:])
	name := s.tmpPrefix() + "batch-" + randomHex() + ".tar"
	info, err := s.client.PutObject(ctx, s.cfg.Bucket, name, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{
		ContentType:          "application/x-tar",
		DisableContentSha256: true,
		DisableMultipart:     true,
		UserMetadata:         map[string]string{extractHeader: "true"},
	})
	if err != nil {
		return fmt.Errorf("sending %d blobs as %s: %w", len(batch), name, explain(err))
	}
	if info.ETag != want {
		return fmt.Errorf("sending %d blobs as %s: the server read bytes whose md5 is %q, the batch's is %s", len(batch), name, info.ETag, want)
	}
	last := batch[len(batch)-1]
	oi, err := s.client.StatObject(ctx, s.cfg.Bucket, last.name, minio.StatObjectOptions{})
	switch {
	case minio.ToErrorResponse(err).Code == minio.NoSuchKey:
		b.on.Store(false)
		if rerr := s.client.RemoveObject(ctx, s.cfg.Bucket, name, minio.RemoveObjectOptions{}); rerr != nil {
			s.log.Warn("removing a batch the server stored as it is", "bucket", s.cfg.Bucket, "object", name, "err", rerr)
		}
		return fmt.Errorf("the server stored the batch as %s instead of unpacking it (%s is missing): small blobs go one by one from now on", name, last.name)
	case err != nil:
		return fmt.Errorf("checking %s after its batch: %w", last.name, explain(err))
	case oi.Size != int64(len(last.body)):
		return fmt.Errorf("%s holds %d bytes after its batch, %d were sent", last.name, oi.Size, len(last.body))
	}
	if skew := time.Since(oi.LastModified).Abs(); skew > batchClockSkew {
		b.on.Store(false)
		return fmt.Errorf("the server dated %s %s, %s from this node's clock: small blobs go one by one from now on", last.name, oi.LastModified.Format(time.RFC3339), skew.Round(time.Second))
	}
	return nil
}

// tarOf is the batch as a tar. A blob committed twice in one batch goes in
// once. The files have no time (zero): the server dates each object itself,
// as it does a PUT.
func tarOf(batch []*held) ([]byte, error) {
	size := 2 * 512
	for _, h := range batch {
		size += 512 + (len(h.body)+511)/512*512
	}
	var buf bytes.Buffer
	buf.Grow(size)
	tw := tar.NewWriter(&buf)
	seen := make(map[string]bool, len(batch))
	for _, h := range batch {
		if seen[h.name] {
			continue
		}
		seen[h.name] = true
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: h.name, Size: int64(len(h.body)), Mode: 0o644, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("batching %s: %w", h.name, err)
		}
		if _, err := tw.Write(h.body); err != nil {
			return nil, fmt.Errorf("batching %s: %w", h.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("batching %d blobs: %w", len(batch), err)
	}
	return buf.Bytes(), nil
}

func randomHex() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
