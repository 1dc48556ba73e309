package fixity

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/miniotest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/storage/s3"
)

var minioServer miniotest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	if err := minioServer.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping MinIO:", err)
	}
	os.Exit(code)
}

// store is a real blob store under test, with a way to change a stored
// blob's bytes behind its back, as a failing disk or a bucket written by
// something else would.
type store struct {
	name  string
	blobs interface {
		storage.Blobs
		Quarantiner
	}
	// corrupt replaces the stored bytes of key with b.
	corrupt func(t *testing.T, key string, b []byte)
	// remove deletes the blob behind the store's back.
	remove func(t *testing.T, key string)
	// quarantined returns the bytes kept of a quarantined key.
	quarantined func(t *testing.T, key string) []byte
}

// stores are the blob stores the audit is tested against: the directory
// store with a file per blob and with packs, and S3 in a real MinIO.
func stores(_ *testing.T) []func(t *testing.T) *store {
	return []func(t *testing.T) *store{
		func(t *testing.T) *store { return dirStore(t, 0) },
		func(t *testing.T) *store { return dirStore(t, dir.DefaultPackBelow) },
		s3Store,
	}
}

// dirStoreB is a packed directory store for a benchmark.
func dirStoreB(b *testing.B) *dir.Store {
	d, err := dir.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

func openCatalogB(b *testing.B) *catalog.Catalog {
	c, err := catalog.Open(context.Background(), filepath.Join(b.TempDir(), "catalog.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func dirStore(t *testing.T, packBelow int64) *store {
	root := t.TempDir()
	d, err := dir.New(root, dir.PackBelow(packBelow))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	name := "dir"
	if packBelow > 0 {
		name = "dir-packed"
	}
	return &store{
		name: name, blobs: d,
		corrupt: func(t *testing.T, key string, b []byte) {
			t.Helper()
			if packBelow == 0 {
				p := filepath.Join(root, key[:2], key)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			rewritePacked(t, d, root, key, b)
		},
		remove: func(t *testing.T, key string) {
			if err := d.Delete(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		},
		quarantined: func(t *testing.T, key string) []byte {
			m, _ := filepath.Glob(filepath.Join(root, dir.QuarantineDir, key+".*"))
			if len(m) != 1 {
				t.Fatalf("quarantine holds %v for %s; want one file", m, key)
			}
			b, err := os.ReadFile(m[0])
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}

// rewritePacked finds the packed blob's bytes in its pack file and
// overwrites them in place with b, of the same length.
func rewritePacked(t *testing.T, d *dir.Store, root, key string, b []byte) {
	t.Helper()
	old := read(t, d, key)
	if len(old) != len(b) {
		t.Fatalf("a packed blob is rewritten at its length: %d, not %d", len(old), len(b))
	}
	packs, _ := filepath.Glob(filepath.Join(root, "packs", "*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, old); i >= 0 {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(b, int64(i)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("blob %s not found in any pack", key)
}

func s3Store(t *testing.T) *store {
	endpoint, access, secret := minioServer.Start(t)
	var rb [6]byte
	rand.Read(rb[:])
	cfg := s3.Config{Endpoint: endpoint, Bucket: "fixity-" + hex.EncodeToString(rb[:]), AccessKey: access, SecretKey: secret,
		CreateBucket: true, Prefix: "mirror"}
	st, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(access, secret, "")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	return &store{
		name: "s3", blobs: st,
		corrupt: func(t *testing.T, key string, b []byte) {
			t.Helper()
			_, err := mc.PutObject(ctx, cfg.Bucket, "mirror/blobs/"+key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
		},
		remove: func(t *testing.T, key string) {
			if err := mc.RemoveObject(ctx, cfg.Bucket, "mirror/blobs/"+key, minio.RemoveObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		quarantined: func(t *testing.T, key string) []byte {
			t.Helper()
			var names []string
			for o := range mc.ListObjects(ctx, cfg.Bucket, minio.ListObjectsOptions{Prefix: "mirror/quarantine/" + key + ".", Recursive: true}) {
				if o.Err != nil {
					t.Fatal(o.Err)
				}
				names = append(names, o.Key)
			}
			if len(names) != 1 {
				t.Fatalf("quarantine holds %v for %s; want one object", names, key)
			}
			o, err := mc.GetObject(ctx, cfg.Bucket, names[0], minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			b, err := io.ReadAll(o)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	}
}

// read returns a stored blob's bytes.
func read(t *testing.T, s storage.Blobs, key string) []byte {
	t.Helper()
	b, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("open blob %s: %v", key, err)
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func openCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := catalog.Open(context.Background(), filepath.Join(t.TempDir(), "catalog.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// held is a resource the test stored and recorded.
type held struct {
	uri, sha256 string
	body        []byte
}

// hold stores body as a blob and records it in the catalog as the copy of
// uri in collection "c" from Source "s", as a fetch worker and the applier
// would.
func hold(t *testing.T, s storage.Blobs, cat *catalog.Catalog, seq uint64, uri string, body []byte) held {
	t.Helper()
	ctx := context.Background()
	w, err := s.Create(ctx, storage.Expect{Size: int64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := md5.Sum(body)
	md5hex := hex.EncodeToString(m[:])
	n := int64(len(body))
	ev := &viaduct.Event{Source: "s", Collection: "c", URI: uri, Op: resourcesync.Created,
		SHA256: key, MD5: md5hex, Length: n, Type: "text/plain",
		Upstream: viaduct.Change{Source: "s", Collection: "c", URI: uri, Op: resourcesync.Created,
			Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Length: &n,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: md5hex}, {Alg: resourcesync.SHA256, Value: key}}}}
	if err := cat.Apply(ctx, seq, time.Now(), ev); err != nil {
		t.Fatal(err)
	}
	return held{uri: uri, sha256: key, body: body}
}

// body is n bytes that differ for each i.
func body(i, n int) []byte {
	b := bytes.Repeat([]byte(fmt.Sprintf("resource %06d ", i)), n/15+1)
	return b[:n]
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// queued records the changes the audit queues.
type queued struct {
	mu sync.Mutex
	cs []*viaduct.Change
}

func (q *queued) PublishChange(_ context.Context, c *viaduct.Change) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cs = append(q.cs, c)
	return nil
}

func (q *queued) all() []*viaduct.Change {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]*viaduct.Change(nil), q.cs...)
}

// checked is the audit's count of blobs checked with result.
func checked(a *Audit, result string) int {
	return int(value(a.m.checked.WithLabelValues(result)))
}

// value is a counter's or a gauge's value now.
func value(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	if c := d.GetCounter(); c != nil {
		return c.GetValue()
	}
	return d.GetGauge().GetValue()
}

// virtualClock is a clock that only sleeps move: the audit's pace then
// shows in the time it says passed, whatever the machine's speed. A sleep
// of at least hold blocks until the context ends, as the wait for the
// next pass does.
type virtualClock struct {
	mu   sync.Mutex
	now  time.Time
	hold time.Duration
	// at, when set, is called with the time after each sleep.
	at func(time.Time)
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) Sleep(ctx context.Context, d time.Duration) error {
	if d >= c.hold {
		<-ctx.Done()
		return ctx.Err()
	}
	c.mu.Lock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	now := c.now
	c.mu.Unlock()
	if c.at != nil {
		c.at(now)
	}
	return ctx.Err()
}
