package republish

import (
	"container/list"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// CacheConfig is the cache of rendered lists: a Resource List, its parts
// and Change Lists, kept on disk as they were sent for the catalog state
// they were read at, and sent again from the file (by sendfile) until the
// catalog moves. A document is kept on its second request at one state,
// never its first: a catalog that moves between every two requests costs
// the cache nothing but a map entry.
type CacheConfig struct {
	// Dir holds the cached documents (files named doc-*, removed at
	// start) and the cuts of closed Change List periods (piece-*, kept
	// across restarts: piecefile.go); nothing else in it is touched.
	// The node sets it to <data_dir>/cache/documents. Empty: no cache.
	Dir string `yaml:"dir"`
	// MaxBytes bounds the files kept; the least recently sent go first.
	// Default 1 GiB; -1 turns the cache off.
	MaxBytes int64 `yaml:"max_bytes"`
}

func (c CacheConfig) withDefaults() (CacheConfig, error) {
	switch {
	case c.MaxBytes == 0:
		c.MaxBytes = 1 << 30
	case c.MaxBytes < -1:
		return c, fmt.Errorf("republish: cache.max_bytes %d: -1 (off) or more", c.MaxBytes)
	}
	return c, nil
}

// docCache is CacheConfig at work. Keys name a document's representation
// (its entity tag and encoding) and the catalog state it was read at.
type docCache struct {
	dir string
	max int64

	mu    sync.Mutex
	size  int64
	files map[string]*list.Element // of *cachedDoc
	lru   list.List                // front: sent last
	seen  map[string]bool          // keys asked for once, not kept yet
	next  int
}

type cachedDoc struct {
	key, path string
	size      int64
}

// maxSeen bounds the keys remembered as asked for once.
const maxSeen = 4096

// newDocCache removes the documents an earlier run left in dir and
// returns a cache in it; nil (no cache) when cfg turns it off. Only its
// own files (doc-*) are removed, whatever else a misconfigured dir holds.
func newDocCache(cfg CacheConfig) (*docCache, error) {
	if cfg.Dir == "" || cfg.MaxBytes < 0 {
		return nil, nil
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("republish: document cache %s: %w", cfg.Dir, err)
	}
	old, err := filepath.Glob(filepath.Join(cfg.Dir, "doc-*"))
	if err != nil {
		return nil, fmt.Errorf("republish: document cache %s: %w", cfg.Dir, err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("republish: empty document cache %s: %w", cfg.Dir, err)
		}
	}
	return &docCache{dir: cfg.Dir, max: cfg.MaxBytes, files: map[string]*list.Element{}, seen: map[string]bool{}}, nil
}

// open returns the cached document under key, opened, and its size; a
// file evicted meanwhile stays readable through the handle. ok is false
// when there is none.
func (c *docCache) open(key string) (f *os.File, size int64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.files[key]
	if e == nil {
		return nil, 0, false
	}
	d := e.Value.(*cachedDoc)
	f, err := os.Open(d.path)
	if err != nil {
		c.dropLocked(e)
		return nil, 0, false
	}
	c.lru.MoveToFront(e)
	return f, d.size, true
}

// fill returns a writer that keeps what is written to it as the document
// under key once committed, or nil when the key is asked for the first
// time (it is remembered) or is being kept already.
func (c *docCache) fill(key string) *docFill {
	c.mu.Lock()
	if c.files[key] != nil {
		c.mu.Unlock()
		return nil
	}
	if !c.seen[key] {
		if len(c.seen) >= maxSeen {
			clear(c.seen)
		}
		c.seen[key] = true
		c.mu.Unlock()
		return nil
	}
	c.next++
	path := filepath.Join(c.dir, fmt.Sprintf("doc-%d", c.next))
	c.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return nil
	}
	return &docFill{c: c, key: key, f: f}
}

func (c *docCache) dropLocked(e *list.Element) {
	d := c.lru.Remove(e).(*cachedDoc)
	delete(c.files, d.key)
	c.size -= d.size
	os.Remove(d.path)
}

// docFill writes one document into the cache as it is sent. A write
// error, or a document larger than the whole cache, gives up keeping it;
// the document being sent is not affected.
type docFill struct {
	c      *docCache
	key    string
	f      *os.File
	n      int64
	failed bool
}

func (w *docFill) Write(p []byte) (int, error) {
	if w.failed {
		return len(p), nil
	}
	if w.n+int64(len(p)) > w.c.max {
		w.failed = true
		return len(p), nil
	}
	n, err := w.f.Write(p)
	w.n += int64(n)
	if err != nil {
		w.failed = true
	}
	return len(p), nil
}

// commit keeps the document when it was written whole (ok), evicting the
// least recently sent ones to make room; else it throws it away.
func (w *docFill) commit(ok bool) {
	err := w.f.Close()
	path := w.f.Name()
	if !ok || w.failed || err != nil {
		os.Remove(path)
		return
	}
	c := w.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files[w.key] != nil {
		os.Remove(path) // another request kept it first
		return
	}
	for c.size+w.n > c.max && c.lru.Len() > 0 {
		c.dropLocked(c.lru.Back())
	}
	delete(c.seen, w.key)
	c.files[w.key] = c.lru.PushFront(&cachedDoc{key: w.key, path: path, size: w.n})
	c.size += w.n
}

var _ io.Writer = (*docFill)(nil)
