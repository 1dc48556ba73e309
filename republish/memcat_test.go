package republish

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/provenance"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// memCatalog is a Catalog in memory for tests. Writes replace the sorted
// slice of a collection, so a reader walking the old one sees a consistent
// snapshot, as the real catalog's single read does.
type memCatalog struct {
	mu      sync.RWMutex
	byURI   map[string]map[string]*Record // collection -> harvested URI
	sorted  map[string][]*Record          // collection -> held, in URI order
	changes map[string][]*Record
	seq     uint64
}

var _ Catalog = (*memCatalog)(nil)

func newMemCatalog() *memCatalog {
	return &memCatalog{byURI: map[string]map[string]*Record{}, sorted: map[string][]*Record{}, changes: map[string][]*Record{}}
}

// LastApplied is the sequence of the last change applied, as the SQLite
// catalog names its state: the Resource Lists' tags carry it.
func (m *memCatalog) LastApplied(context.Context) (uint64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.seq, nil
}

// apply records a change made at at, as the catalog's applier would.
func (m *memCatalog) apply(rec Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	rec.Seq = m.seq
	r := &rec
	if m.byURI[rec.Collection] == nil {
		m.byURI[rec.Collection] = map[string]*Record{}
	}
	m.byURI[rec.Collection][rec.URI] = r
	m.changes[rec.Collection] = append(m.changes[rec.Collection], r)
	var held []*Record
	for _, x := range m.byURI[rec.Collection] {
		if !x.Deleted() {
			held = append(held, x)
		}
	}
	sort.Slice(held, func(i, j int) bool { return held[i].URI < held[j].URI })
	m.sorted[rec.Collection] = held
}

func (m *memCatalog) Resources(ctx context.Context, coll, after string, limit int, fn func(*Record) error) error {
	m.mu.RLock()
	held := m.sorted[coll]
	m.mu.RUnlock()
	i := sort.Search(len(held), func(i int) bool { return held[i].URI > after })
	for n := 0; i < len(held) && (limit == 0 || n < limit); i, n = i+1, n+1 {
		if err := fn(held[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *memCatalog) Changes(ctx context.Context, coll string, from, until time.Time, fn func(*Record) error) error {
	m.mu.RLock()
	log := m.changes[coll]
	m.mu.RUnlock()
	i := sort.Search(len(log), func(i int) bool { return !log[i].At.Before(from) })
	for ; i < len(log) && (until.IsZero() || log[i].At.Before(until)); i++ {
		if err := fn(log[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *memCatalog) Resource(ctx context.Context, coll, origin string) (*Record, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, r := range m.byURI[coll] {
		if provenance.OriginURI(&r.Upstream) == origin {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%s in %s: %w", origin, coll, ErrNotFound)
}

func (m *memCatalog) Lookup(ctx context.Context, uri string) ([]*Record, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Record
	for _, c := range m.byURI {
		for _, r := range c {
			if r.URI == uri || provenance.OriginURI(&r.Upstream) == uri {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func (m *memCatalog) Stats(ctx context.Context, coll string) (Stats, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	log := m.changes[coll]
	st := Stats{Resources: int64(len(m.sorted[coll])), Changes: int64(len(log))}
	if len(log) > 0 {
		st.First, st.Last = log[0].At, log[len(log)-1].At
		return st, nil
	}
	var last *Record // the last change applied, of any collection
	for _, l := range m.changes {
		if len(l) > 0 && (last == nil || l[len(l)-1].Seq > last.Seq) {
			last = l[len(l)-1]
		}
	}
	if last != nil {
		st.Floor = last.At
	}
	return st, nil
}

// memBlobs is a blob store in memory.
type memBlobs struct{ blobs map[string][]byte }

func (b *memBlobs) Open(ctx context.Context, key string) (storage.Blob, error) {
	data, ok := b.blobs[key]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", key, storage.ErrNotFound)
	}
	return &memBlob{Reader: bytes.NewReader(data), info: storage.Info{Key: key, Size: int64(len(data))}}, nil
}

type memBlob struct {
	*bytes.Reader
	info storage.Info
}

func (b *memBlob) Close() error       { return nil }
func (b *memBlob) Info() storage.Info { return b.info }

// put stores data and returns a record of it, held in coll under the
// harvested URI uri, changed at at.
func (b *memBlobs) put(coll, uri, op string, at time.Time, data []byte, typ string, up viaduct.Change) Record {
	s := sha256.Sum256(data)
	m := md5.Sum(data)
	key := hex.EncodeToString(s[:])
	if op != resourcesync.Deleted {
		b.blobs[key] = data
	}
	up.URI = uri
	up.Op = op
	return Record{Collection: coll, URI: uri, Op: op, At: at, SHA256: key, MD5: hex.EncodeToString(m[:]),
		Length: int64(len(data)), Type: typ, Upstream: up}
}
