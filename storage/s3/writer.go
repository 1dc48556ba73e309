package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// maxCopySize is the largest object one CopyObject call can copy; larger
// ones are copied part by part with ComposeObject.
const maxCopySize = 5 << 30

var (
	errClosed  = errors.New("blob writer already committed or aborted")
	errAborted = errors.New("blob write aborted")
	errStalled = errors.New("upload made no progress")
)

// writer is one blob being written. It holds the bytes while they fit in
// SinglePutSize, then streams them to a temporary object through a pipe. It
// is used by one goroutine at a time; the upload goroutine it starts ends
// in Commit or Abort.
type writer struct {
	s   *Store
	ctx context.Context // bounds the streamed upload
	h   *resourcesync.Hasher
	buf []byte

	// Set once streaming.
	tmp    string
	pw     *io.PipeWriter
	result chan upload
	pr     *io.PipeReader
	cancel context.CancelFunc // ends the upload
	// stalled is set, and stall closed, when the upload made no progress
	// for Store.stall and was given up.
	stalled atomic.Bool
	stall   chan struct{}

	uploaded bool   // the temporary object exists
	key      string // set once committed
	done     bool   // committed or aborted
}

// upload is what the upload goroutine reports.
type upload struct {
	size int64
	err  error
}

var _ storage.BlobWriter = (*writer)(nil)

// Create starts a blob. ctx bounds the whole write, up to Commit.
func (s *Store) Create(ctx context.Context, want storage.Expect) (storage.BlobWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &writer{s: s, ctx: ctx, h: resourcesync.NewHasherFor(want.Size, want.SHA1)}, nil
}

func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errClosed
	}
	if w.pw == nil {
		if len(w.buf)+len(p) <= w.s.cfg.SinglePutSize {
			if _, err := w.h.Write(p); err != nil {
				return 0, err
			}
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		w.stream()
		held := w.buf
		w.buf = nil
		if _, err := w.pipeWrite(held); err != nil {
			return 0, w.uploadErr(err)
		}
	}
	n, err := w.pipeWrite(p)
	if _, herr := w.h.Write(p[:n]); herr != nil {
		return n, herr
	}
	if err != nil {
		return n, w.uploadErr(err)
	}
	return n, nil
}

// stream starts uploading what is written to a new temporary object.
func (w *writer) stream() {
	w.tmp = w.s.tmpPrefix() + randomHex()
	pr, pw := io.Pipe()
	uctx, cancel := context.WithCancel(w.ctx)
	w.pr, w.pw, w.result, w.cancel, w.stall = pr, pw, make(chan upload, 1), cancel, make(chan struct{})
	go func() {
		defer cancel()
		info, err := w.s.client.PutObject(uctx, w.s.cfg.Bucket, w.tmp, pr, -1, minio.PutObjectOptions{
			PartSize:    w.s.cfg.PartSize,
			ContentType: "application/octet-stream",
		})
		// Unblocks a Write the upload will no longer read; nil makes it
		// io.ErrClosedPipe.
		pr.CloseWithError(err)
		w.result <- upload{size: info.Size, err: err}
	}()
}

// watched runs f, a wait on the upload, and ends the upload when f has
// made no progress for Store.stall: a server that takes a request and then
// reads nothing would otherwise hold the writer, and the fetch worker
// behind it, until TCP gives up, or for ever.
func (w *writer) watched(f func()) {
	t := time.AfterFunc(w.s.stallAfter(), w.giveUp)
	f()
	t.Stop()
}

// giveUp ends a stalled upload and every wait on it. The upload goroutine
// may still be telling the server to drop the upload; it ends by itself.
func (w *writer) giveUp() {
	if w.stalled.CompareAndSwap(false, true) {
		w.cancel()
		w.pr.CloseWithError(errStalled)
		close(w.stall)
	}
}

// outcome waits, under the stall watch, for the upload goroutine's report.
func (w *writer) outcome() upload {
	var up upload
	w.watched(func() {
		select {
		case up = <-w.result:
		case <-w.stall:
			up.err = errStalled
		}
	})
	return up
}

// pipeWrite hands p to the upload under the stall watch.
func (w *writer) pipeWrite(p []byte) (n int, err error) {
	w.watched(func() { n, err = w.pw.Write(p) })
	return n, err
}

func (w *writer) uploadErr(err error) error {
	if w.stalled.Load() {
		err = fmt.Errorf("no progress for %s: %w", w.s.stallAfter(), err)
	}
	return fmt.Errorf("uploading temporary blob %s to s3 bucket %s: %w", w.tmp, w.s.cfg.Bucket, explain(err))
}

func (w *writer) Sum() (int64, resourcesync.Hashes) { return w.h.Len(), w.h.Sum() }

// Commit stores the blob under its key unless it is there already.
func (w *writer) Commit(ctx context.Context) (string, error) {
	if w.key != "" {
		return w.key, nil
	}
	if w.done {
		return "", errClosed
	}
	key := w.h.Sum().Get(resourcesync.SHA256)
	var err error
	if w.pw == nil {
		err = w.putSmall(ctx, key)
	} else {
		err = w.commitStreamed(ctx, key)
	}
	if err != nil {
		w.Abort()
		return "", fmt.Errorf("committing blob %s to s3 bucket %s: %w", key, w.s.cfg.Bucket, explain(err))
	}
	w.key, w.done = key, true
	w.h.Close()
	return key, nil
}

// putSmall stores a held blob under its final name, which appears whole
// or not at all: in a batch with others while batches are on, else with a
// PUT of its own.
func (w *writer) putSmall(ctx context.Context, key string) error {
	defer func() { w.buf = nil }()
	if w.s.batches.on.Load() {
		return w.s.batches.put(ctx, w.s.blobName(key), w.buf)
	}
	return w.s.putOne(ctx, w.s.blobName(key), w.buf)
}

// putOne stores a small blob with one PUT of its own. The server checks
// the Content-MD5. The PUT is unconditional: a blob stored already gets
// the same bytes again under the same key, which changes nothing a reader
// sees and moves the object's time, the touch a garbage collection that
// found it unreferenced heeds (storage.Sweeper). A new blob and a blob
// stored already each cost one request. A PUT made conditional on the key
// being free (If-None-Match: *), with a touch when it was not, cost MinIO
// a quarter more CPU for every new blob (docs/benchmarks.md), and new
// blobs are nearly all of them: a change whose bytes the catalog already
// holds is not fetched.
func (s *Store) putOne(ctx context.Context, name string, body []byte) error {
	// The body is sent as it is, its payload unsigned: the signed
	// Content-MD5 header, which the server checks, already binds the
	// bytes to the request. On a connection without TLS minio-go
	// otherwise signs the body in chunks (aws-chunked), a third of a
	// small PUT's CPU here and more of the server's.
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", SendContentMd5: true, DisableContentSha256: true}
	select {
	case s.puts <- struct{}{}:
		defer func() { <-s.puts }()
	case <-ctx.Done():
		return ctx.Err()
	}
	s.m.puts.Inc()
	_, err := s.client.PutObject(ctx, s.cfg.Bucket, name, bytes.NewReader(body), int64(len(body)), opts)
	return err
}

// commitStreamed finishes the upload, checks that the temporary object holds
// every byte written, and copies it to its final name.
func (w *writer) commitStreamed(ctx context.Context, key string) error {
	w.pw.Close()
	up := w.outcome()
	w.pw = nil
	if up.err != nil {
		return w.uploadErr(up.err)
	}
	w.uploaded = true
	if up.size != w.h.Len() {
		return fmt.Errorf("temporary object %s holds %d bytes, %d were written", w.tmp, up.size, w.h.Len())
	}
	ok, err := w.s.touched(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		dst := minio.CopyDestOptions{Bucket: w.s.cfg.Bucket, Object: w.s.blobName(key)}
		src := minio.CopySrcOptions{Bucket: w.s.cfg.Bucket, Object: w.tmp}
		if w.h.Len() <= maxCopySize {
			_, err = w.s.client.CopyObject(ctx, dst, src)
		} else {
			_, err = w.s.client.ComposeObject(ctx, dst, src)
		}
		if err != nil {
			return fmt.Errorf("copying %s to its key: %w", w.tmp, err)
		}
	}
	w.removeTemporary()
	return nil
}

// Abort stops the upload and removes the temporary object if it was made.
func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.h.Close()
	w.buf = nil
	if w.pw != nil {
		w.pw.CloseWithError(errAborted)
		w.cancel()  // an upload waiting on the server ends now
		w.outcome() // a failed upload is aborted by the client
		w.pw = nil
	}
	w.removeTemporary()
	return nil
}

// removeTemporary deletes the temporary object. A failure is only logged:
// the blob's fate does not depend on it, and New removes stale temporaries.
func (w *writer) removeTemporary() {
	if !w.uploaded {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), time.Minute)
	defer cancel()
	if err := w.s.client.RemoveObject(ctx, w.s.cfg.Bucket, w.tmp, minio.RemoveObjectOptions{}); err != nil {
		w.s.log.Warn("removing temporary blob object", "bucket", w.s.cfg.Bucket, "object", w.tmp, "err", err)
		return
	}
	w.uploaded = false
}
