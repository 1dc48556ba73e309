package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// fetch reads the change's bitstream from its origin, else from its
// mirrors, and returns the event of the verified, committed copy. When
// every URI failed, the failure most likely to pass on a later delivery
// decides, and the evidence lists what each URI did.
func (p *Pool) fetch(ctx context.Context, msg *queue.ChangeMsg, client *upstream.Client, wait time.Duration, log *slog.Logger) (*staged, *failure) {
	c := msg.Change
	var best *failure
	var tried []string
	for _, uri := range candidates(c) {
		st, f := p.fetchOne(ctx, c, client, uri, wait)
		if f == nil {
			if uri != c.URI {
				log.Info("bitstream read from a mirror", "mirror", uri)
			}
			return st, nil
		}
		// A busy host (nothing was sent; the change is parked or handed
		// back) and an interruption are not failures of the Source.
		if !f.busy {
			tried = append(tried, uri+": "+f.Error())
		}
		if (uri != c.URI || len(c.Links) > 0) && !f.busy && !f.interrupted {
			log.Warn("could not read bitstream", "from", uri, "reason", f.reason, "err", f.err)
		}
		if best == nil || f.hope() < best.hope() {
			best = f
		}
		if f.interrupted || f.busy {
			break
		}
	}
	if len(tried) > 1 && !best.busy { // a busy failure carries no evidence
		best.evidence["tried"] = strings.Join(tried, "\n")
	}
	return nil, best
}

// fetchOne GETs uri, streams the body into a new blob while hashing it,
// and checks the declared length and hashes: the copy it returns is
// verified, not yet committed (see staged). A copy that does not match is
// aborted, never committed.
func (p *Pool) fetchOne(ctx context.Context, c *viaduct.Change, client *upstream.Client, uri string, wait time.Duration) (*staged, *failure) {
	start := time.Now()
	resp, err := client.Get(ctx, upstream.Request{URI: uri, Source: c.Source, MaxBytes: p.cfg.MaxBlobBytes, HostWait: wait, Declared: c.Length})
	if err != nil {
		f := p.overDeclared(c, uri, err)
		if f == nil {
			f = classify(ctx, c, uri, err, p.cfg.NotFoundAttempts)
		}
		if !f.busy { // a busy host's attempt sent nothing: it is not timed
			p.timed(c.Source, start)
		}
		return nil, f
	}
	defer p.timed(c.Source, start)
	defer resp.Body.Close()
	want := expect(c, resp)
	w, err := p.deps.Blobs.Create(ctx, want)
	if err != nil {
		return nil, p.storeFailure(ctx, c, uri, fmt.Errorf("start blob: %w", err))
	}
	handed := false
	defer func() {
		if !handed {
			w.Abort()
		}
	}()

	bp := p.bufs.get(want.Size)
	src := &readErr{r: resp.Body}
	n, err := io.CopyBuffer(writerOnly{w}, src, *bp)
	p.bufs.put(bp)
	p.m.bytes.WithLabelValues(c.Source).Add(float64(n))
	if err != nil {
		if f := p.overDeclared(c, uri, src.err); f != nil {
			f.evidence["status"] = strconv.Itoa(resp.Status)
			return nil, f
		}
		if src.err != nil {
			f := classify(ctx, c, uri, src.err, p.cfg.NotFoundAttempts)
			f.evidence["computed_length"] = strconv.FormatInt(n, 10) + " (incomplete)"
			f.evidence["status"] = strconv.Itoa(resp.Status)
			return nil, f
		}
		return nil, p.storeFailure(ctx, c, uri, fmt.Errorf("write blob: %w", err))
	}

	// The whole body is read: give the connection and the Source's host
	// slot back before the commit, which waits for a sync round of the
	// store. Politeness limits what the Source serves, not how long the
	// store takes to make it durable.
	resp.Body.Close()
	size, sums := w.Sum()
	if f := verify(c, uri, resp.Status, size, sums); f != nil {
		return nil, f
	}
	handed = true
	ev := newEvent(c, sums.Get(resourcesync.SHA256), sums.Get(resourcesync.MD5), size, typeOr(c.Type, resp.Header.Get("Content-Type")))
	return &staged{w: w, c: c, uri: uri, ev: ev}, nil
}

// timed observes a GET of source's that began at start.
func (p *Pool) timed(source string, start time.Time) {
	p.m.duration.WithLabelValues(source).Observe(time.Since(start).Seconds())
}

// expect is what a change's copy is expected to be: the length the Source
// declared, else the one its response announces (the decoded length is
// unknown when the transfer was gzip-encoded), and the sha-1 when the
// Source declared it, since nothing else needs it.
func expect(c *viaduct.Change, resp *upstream.Response) storage.Expect {
	e := storage.Expect{Size: resp.ContentLength, SHA1: c.Hash.Get(resourcesync.SHA1) != ""}
	if c.Length != nil {
		e.Size = *c.Length
	}
	return e
}

// staged is a copy read and verified, not yet committed. A commit waits
// for a sync round of the blob store, so the worker that read the copy
// hands it on (see handle) and turns to its next change: how many copies
// are on their way to the disk at once is not bounded by how many are
// being read, and each sync round covers more of them.
type staged struct {
	w   storage.BlobWriter
	c   *viaduct.Change
	uri string
	ev  *viaduct.Event // the event of the copy once committed
}

// commit makes the staged copy durable under its key.
func (p *Pool) commit(ctx context.Context, s *staged) *failure {
	defer s.w.Abort()
	key, err := s.w.Commit(ctx)
	if err != nil {
		return p.storeFailure(ctx, s.c, s.uri, fmt.Errorf("commit blob %s: %w", s.ev.SHA256, err))
	}
	s.ev.SHA256 = key
	p.m.fetched.WithLabelValues(s.c.Source).Inc()
	return nil
}

// verify compares what was read with what the Source declared. A mismatch
// is worth retrying, since the Source may be between writing the bitstream
// and its lists.
func verify(c *viaduct.Change, uri string, status int, size int64, sums resourcesync.Hashes) *failure {
	var err error
	if c.Length != nil && size != *c.Length {
		err = fmt.Errorf("length mismatch: declared %d, read %d bytes", *c.Length, size)
	} else if verifiable(c.Hash) {
		err = c.Hash.Verify(sums)
	}
	if err == nil {
		return nil
	}
	f := &failure{reason: "mismatch", retry: true, err: fmt.Errorf("%s: %w", uri, err), evidence: evidence(c, uri)}
	f.evidence["error"] = err.Error()
	f.evidence["status"] = strconv.Itoa(status)
	f.evidence["computed_length"] = strconv.FormatInt(size, 10)
	f.evidence["computed_hash"] = sums.String()
	f.evidence["computed_sha256"] = sums.Get(resourcesync.SHA256)
	f.evidence["computed_md5"] = sums.Get(resourcesync.MD5)
	return f
}

// verifiable reports whether hs holds a digest the blob writer computes,
// in a form that can be read (hex or base64): a Source that declares only
// other algorithms, or digests nobody can read, is taken on its length.
// Verify compares digests, not their spellings.
func verifiable(hs resourcesync.Hashes) bool {
	return len(hs.Verifiable()) > 0
}

// overDeclared is the mismatch failure for a body found longer than the
// Source declared, by its Content-Length or one byte past the declared
// length, nil for any other error. Reading stopped there, and what was
// written is discarded with the temporary blob.
func (p *Pool) overDeclared(c *viaduct.Change, uri string, err error) *failure {
	if err == nil || !errors.Is(err, upstream.ErrTooLarge) || c.Length == nil || *c.Length >= p.cfg.MaxBlobBytes {
		return nil
	}
	f := &failure{reason: "mismatch", retry: true, err: fmt.Errorf("%s: length mismatch: declared %d, served more: %w", uri, *c.Length, err), evidence: evidence(c, uri)}
	f.evidence["error"] = err.Error()
	f.evidence["computed_length"] = fmt.Sprintf("more than %d (reading stopped)", *c.Length)
	var ue *upstream.Error
	if errors.As(err, &ue) && ue.Status != 0 {
		f.evidence["status"] = strconv.Itoa(ue.Status)
	}
	return f
}

func (p *Pool) storeFailure(ctx context.Context, c *viaduct.Change, uri string, err error) *failure {
	f := &failure{reason: "store", retry: true, interrupted: ctx.Err() != nil, err: err, evidence: evidence(c, uri)}
	f.evidence["error"] = err.Error()
	return f
}

// readErr reads the upstream body a whole buffer at a time: a read
// returns once p is full or the body has ended or failed, so that the
// blob store is handed whole aligned buffers but the last, which it may
// write around the page cache (storage.AlignedBuffer). It remembers an
// error of the body, to tell it from an error of the store when a copy
// fails.
type readErr struct {
	r   io.Reader
	err error
}

func (r *readErr) Read(p []byte) (n int, err error) {
	for n < len(p) && err == nil {
		var m int
		m, err = r.r.Read(p[n:])
		n += m
	}
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return n, err
}

// writerOnly hides a writer's ReadFrom so the pooled buffer is used.
type writerOnly struct{ io.Writer }
