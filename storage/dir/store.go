package dir

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// Store is a blob store in a local directory. It is safe for concurrent use
// within one process. Several processes may share a directory only if none
// is started while another is writing, since start-up removes temporaries.
type Store struct {
	root string
	tmp  string
	// wholeFS: each round of group is a syncfs of the file system (Linux
	// 5.8+); otherwise files and directories are synced one by one.
	wholeFS bool
	// anon: temporaries are anonymous files linked under their key
	// (Linux's O_TMPFILE); otherwise named files in tmp.
	anon bool
	// direct: the temporary of a blob expected to be DirectFrom bytes or
	// more takes its aligned writes around the page cache (O_DIRECT).
	// The disk reads them from the writer's buffer: no copy into the page
	// cache, no write-back of it later, and the cache keeps what is read
	// rather than filling with bitstreams nobody reads soon. Needs anon
	// and a file system that takes direct writes.
	direct bool
	group  *grouper[string]
	fanOut *fanOut
	// depth is the layout's number of fan-out levels (see layout.go).
	depth int
	// packs holds the blobs of at most packBelow bytes; nil when every
	// blob has a file of its own.
	packs     *packs
	packBelow int64
}

var (
	_ storage.Blobs   = (*Store)(nil)
	_ storage.Deleter = (*Store)(nil)
)

// Option adjusts a Store at New.
type Option func(*options)

type options struct {
	syncGap   time.Duration
	packBelow int64
	indirect  bool
}

// DefaultSyncInterval is the least time between the starts of two sync
// rounds unless SyncInterval says otherwise. A round costs about the same
// for one commit as for a hundred; on a two-core machine ingesting small
// bitstreams, rounds run back to back (about 800 a second, 1.2 ms each)
// held the ingest near 3,300 resources a second, and a 3 ms interval
// raised it to about 4,300 (docs/benchmarks.md). A lone commit on an idle
// store still starts its round at once. At 10 ms (from 3) each round of
// the pack index covers about three times the blobs: a baseline of
// 20,000 x 1 KiB took 7 % less CPU a resource (136-143 against 148-154
// µs) and 8 % less time, and the completions' bound (twice the workers)
// still covers the two rounds a commit waits at 12,000 a second.
const DefaultSyncInterval = 10 * time.Millisecond

// SyncInterval sets the least time between the starts of two sync rounds;
// commits arriving meanwhile join the next round. Zero runs rounds back to
// back, each as soon as the previous one ends. A longer interval trades
// each commit's latency for fewer, larger rounds.
func SyncInterval(d time.Duration) Option {
	return func(o *options) { o.syncGap = max(d, 0) }
}

// PackBelow sets the size up to which a blob is appended to a shared pack
// file rather than given a file of its own (DefaultPackBelow unless
// set); zero or less gives every blob its own file. Blobs already stored
// stay where they are whatever the setting.
func PackBelow(n int64) Option {
	return func(o *options) { o.packBelow = max(n, 0) }
}

// DirectFrom is the length from which a blob expected to be that long
// (storage.Expect) is written around the page cache. Each direct write
// waits for the disk, which pays where the writes are large: the fetch
// workers read such a blob a MiB at a time. Smaller blobs, and blobs of
// unknown length, go through the page cache and are written back by the
// sync rounds.
const DirectFrom = 1 << 20

// DirectWrites sets whether a large blob is written around the page cache
// where the file system allows it (on unless set; see DirectFrom). Off,
// every byte goes through the page cache and is written back from it.
func DirectWrites(on bool) Option {
	return func(o *options) { o.indirect = !on }
}

// New opens the store at root, creating the directory when it is missing,
// and removes temporary files a crash left behind.
func New(root string, opts ...Option) (*Store, error) {
	o := options{syncGap: DefaultSyncInterval, packBelow: DefaultPackBelow}
	for _, opt := range opts {
		opt(&o)
	}
	if root == "" {
		return nil, errors.New("blob directory: no path given")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blob directory %q: %w", root, err)
	}
	s := &Store{root: root, tmp: filepath.Join(root, "tmp")}
	if err := os.RemoveAll(s.tmp); err != nil {
		return nil, fmt.Errorf("blob directory %s: removing leftover temporaries: %w", root, err)
	}
	if err := os.MkdirAll(s.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("blob directory %s: %w", root, err)
	}
	if s.depth, err = openLayout(root); err != nil {
		return nil, fmt.Errorf("blob directory %s: %w", root, err)
	}
	s.fanOut = &fanOut{digits: 2 * s.depth}
	s.anon = anonWorks(s.tmp)
	s.direct = s.anon && !o.indirect && directWorks(s.tmp)
	run, err := openSyncFS(root)
	if err != nil {
		return nil, fmt.Errorf("blob directory %s: %w", root, err)
	}
	s.wholeFS = run != nil
	if run == nil {
		run = syncDirs
	}
	s.group = newGrouper(run, o.syncGap)
	if o.packBelow > 0 || packsExist(root) {
		if s.packs, err = openPacks(root, o.syncGap, o.packBelow); err != nil {
			return nil, fmt.Errorf("blob directory %s: %w", root, err)
		}
		s.packBelow = o.packBelow
	}
	return s, nil
}

// Close closes the pack index. The store is not to be used after it.
func (s *Store) Close() error {
	if s.packs == nil {
		return nil
	}
	return s.packs.close()
}

// Root is the directory the store keeps its blobs in.
func (s *Store) Root() string { return s.root }

// path is where the blob with key lives. The key must have passed
// storage.CheckKey.
func (s *Store) path(key string) string {
	if s.depth == oneLevel {
		return filepath.Join(s.root, key[0:2], key)
	}
	return filepath.Join(s.root, key[0:2], key[2:4], key)
}

// Create starts a blob in a new temporary file: an anonymous one where
// the system has them (see openAnon), else a named one in root/tmp.
func (s *Store) Create(ctx context.Context, want storage.Expect) (storage.BlobWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := newWriter(s, want)
	if s.packBelow > 0 && want.Size <= s.packBelow {
		// Held in memory while it may still be packed; see writer.spill.
		w.buf = make([]byte, 0, max(want.Size, 0))
		return w, nil
	}
	if err := w.spill(want.Size >= DirectFrom); err != nil {
		return nil, err
	}
	return w, nil
}

// createTemp creates a temporary file for a blob's bytes, for direct
// writes when direct is asked and the store makes them.
func (s *Store) createTemp(direct bool) (f *os.File, isDirect bool, err error) {
	if direct && s.direct {
		if f, err := openAnon(s.tmp, true); err == nil {
			return f, true, nil
		}
	}
	if s.anon {
		f, err = openAnon(s.tmp, false)
	} else {
		f, err = os.CreateTemp(s.tmp, "blob-*")
	}
	if err != nil {
		return nil, false, fmt.Errorf("creating temporary blob in %s: %w", s.tmp, err)
	}
	return f, false, nil
}

// Open opens the blob's file.
func (s *Store) Open(ctx context.Context, key string) (storage.Blob, error) {
	if err := storage.CheckKey(key); err != nil {
		return nil, err
	}
	if s.packs != nil {
		if b, ok, err := s.openPacked(ctx, key); ok || err != nil {
			return b, err
		}
	}
	f, err := os.Open(s.path(key))
	if err != nil {
		return nil, notFound(key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob %s: %w", key, err)
	}
	return &blob{File: f, info: info(key, fi)}, nil
}

// Stat describes the blob's file.
func (s *Store) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := storage.CheckKey(key); err != nil {
		return storage.Info{}, err
	}
	if s.packs != nil {
		loc, ok, err := s.packs.find(ctx, key)
		if err != nil {
			return storage.Info{}, fmt.Errorf("blob %s: pack index: %w", key, err)
		}
		if ok {
			return loc.info(key), nil
		}
	}
	fi, err := os.Stat(s.path(key))
	if err != nil {
		return storage.Info{}, notFound(key, err)
	}
	return info(key, fi), nil
}

// Delete removes the blob's file; a missing file is not an error. The
// fan-out directories stay, since other blobs will land in them.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := storage.CheckKey(key); err != nil {
		return err
	}
	if s.packs != nil {
		if _, err := s.packs.remove(ctx, key, time.Time{}); err != nil {
			return fmt.Errorf("deleting blob %s: pack index: %w", key, err)
		}
	}
	p := s.path(key)
	switch err := os.Remove(p); {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("deleting blob %s: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("deleting blob %s: %w", key, err)
	}
	return nil
}

// syncEntry makes the link of blob key into dir durable: dir is synced
// and, the first time this process uses that fan-out directory, the
// directories holding its path up to the root, all in the round of
// commits under way.
func (s *Store) syncEntry(mark uint64, key, dir string) error {
	if s.wholeFS || s.fanOut.isDurable(key) {
		return s.group.wait(mark, dir)
	}
	dirs := []string{dir}
	for d := dir; len(dirs) <= s.depth; {
		d = filepath.Dir(d)
		dirs = append(dirs, d) // up to the root, depth levels above dir
	}
	if err := s.group.wait(mark, dirs...); err != nil {
		return err
	}
	s.fanOut.setDurable(key)
	return nil
}

func notFound(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &notFoundError{key: key}
	}
	return fmt.Errorf("blob %s: %w", key, err)
}

// notFoundError is the error of a blob that is not stored. A fetch worker
// asks for the declared sha-256 of every change before fetching it, and
// during a first baseline the answer is nearly always this, so the
// message is only formatted if someone reads it.
type notFoundError struct{ key string }

func (e *notFoundError) Error() string { return "blob " + e.key + ": " + storage.ErrNotFound.Error() }
func (e *notFoundError) Unwrap() error { return storage.ErrNotFound }

func info(key string, fi fs.FileInfo) storage.Info {
	return storage.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}
}

// blob is an open blob file.
type blob struct {
	*os.File
	info storage.Info
}

func (b *blob) Info() storage.Info { return b.info }
