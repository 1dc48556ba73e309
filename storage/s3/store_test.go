package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/viaduct-mirror/viaduct/internal/miniotest"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// server is one MinIO for a test; each store gets its own bucket in it.
type server struct {
	endpoint, accessKey, secretKey string
}

// minioServer serves every test of the package, each in its own bucket.
var minioServer miniotest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	if err := minioServer.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping MinIO:", err)
	}
	os.Exit(code)
}

func startServer(t testing.TB) server {
	e, a, s := minioServer.Start(t)
	return server{e, a, s}
}

// storeThrough opens a store on srv that reaches it through front, a proxy
// the test watches, with the configuration changed by edit.
func storeThrough(t *testing.T, srv server, front *httptest.Server, edit ...func(*Config)) *Store {
	t.Helper()
	cfg := srv.config()
	cfg.Endpoint = strings.TrimPrefix(front.URL, "http://")
	for _, e := range edit {
		e(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// watchedProxy is a reverse proxy in front of srv that hands each request
// to watch, which forwards it to srv by calling forward.
func watchedProxy(t *testing.T, srv server, watch func(r *http.Request, forward func())) *httptest.Server {
	t.Helper()
	target, _ := url.Parse("http://" + srv.endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		watch(r, func() { proxy.ServeHTTP(w, r) })
	}))
	t.Cleanup(front.Close)
	return front
}

func (srv server) config() Config {
	var b [6]byte
	rand.Read(b[:])
	return Config{
		Endpoint:     srv.endpoint,
		Bucket:       "blobs-" + hex.EncodeToString(b[:]),
		AccessKey:    srv.accessKey,
		SecretKey:    srv.secretKey,
		CreateBucket: true,
		// The smallest part, so the suite's large blob spans several.
		PartSize: MinPartSize,
	}
}

func (srv server) newStore(t testing.TB) *Store {
	t.Helper()
	s, err := New(context.Background(), srv.config())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestSuite(t *testing.T) {
	srv := startServer(t)
	storagetest.Run(t, func(t *testing.T) storage.Blobs {
		s := srv.newStore(t)
		t.Cleanup(func() { wantNoTemporaries(t, s) })
		return s
	})
}

// TestSuiteStreamed runs the suite with every blob streamed through a
// temporary object, since the default holds small blobs in memory.
func TestSuiteStreamed(t *testing.T) {
	srv := startServer(t)
	storagetest.Run(t, func(t *testing.T) storage.Blobs {
		cfg := srv.config()
		cfg.SinglePutSize = 1
		s, err := New(context.Background(), cfg)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { wantNoTemporaries(t, s) })
		return s
	})
}

// wantNoTemporaries checks that no temporary object outlived its writer.
func wantNoTemporaries(t *testing.T, s *Store) {
	t.Helper()
	opts := minio.ListObjectsOptions{Prefix: s.tmpPrefix(), Recursive: true}
	for obj := range s.client.ListObjects(context.Background(), s.cfg.Bucket, opts) {
		if obj.Err != nil {
			t.Fatalf("listing temporaries: %v", obj.Err)
		}
		t.Errorf("temporary %s left behind", obj.Key)
	}
}

func TestCreatesBucket(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	cfg := srv.config()
	cfg.CreateBucket = false
	if _, err := New(ctx, cfg); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("New without create_bucket on a missing bucket: %v; want a does-not-exist error", err)
	}
	cfg.CreateBucket = true
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New with create_bucket: %v", err)
	}
	if ok, err := s.client.BucketExists(ctx, cfg.Bucket); !ok || err != nil {
		t.Fatalf("bucket %s after New: exists %v, %v", cfg.Bucket, ok, err)
	}
	// A second store on the same, now existing, bucket works too.
	if _, err := New(ctx, cfg); err != nil {
		t.Errorf("New on an existing bucket: %v", err)
	}
}

func TestBadCredentials(t *testing.T) {
	srv := startServer(t)
	cfg := srv.config()
	cfg.SecretKey = "not-the-secret-key"
	_, err := New(context.Background(), cfg)
	if err == nil {
		t.Fatal("New with a wrong secret key succeeded")
	}
	if !strings.Contains(err.Error(), "check access_key and secret_key") {
		t.Errorf("error %q does not say to check the credentials", err)
	}
	var resp minio.ErrorResponse
	if !errors.As(err, &resp) || resp.Code != minio.SignatureDoesNotMatch {
		t.Errorf("error %q does not carry the server's SignatureDoesNotMatch", err)
	}
}

func TestCredentialsFromEnvironment(t *testing.T) {
	srv := startServer(t)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.secretKey)
	cfg := srv.config()
	cfg.AccessKey, cfg.SecretKey = "", ""
	if _, err := New(context.Background(), cfg); err != nil {
		t.Fatalf("New with credentials from the environment: %v", err)
	}
}

func TestRemovesStaleTemporaries(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	s := srv.newStore(t)
	tmp := s.tmpPrefix() + "left-by-a-crash"
	if _, err := s.client.PutObject(ctx, s.cfg.Bucket, tmp, strings.NewReader("partial"), 7, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	w, _ := s.Create(ctx, storage.Expect{})
	w.Write([]byte("a blob"))
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh temporary may belong to a live writer: it stays.
	if err := s.removeTemporaries(ctx, staleTemporary); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.StatObject(ctx, s.cfg.Bucket, tmp, minio.StatObjectOptions{}); err != nil {
		t.Fatalf("fresh temporary removed: %v", err)
	}
	if err := s.removeTemporaries(ctx, 0); err != nil {
		t.Fatal(err)
	}
	wantNoTemporaries(t, s)
	if _, err := s.Stat(ctx, key); err != nil {
		t.Errorf("blob gone after removing temporaries: %v", err)
	}
}

func TestConfig(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	ok := Config{Endpoint: "127.0.0.1:9000", Bucket: "viaduct", AccessKey: "a", SecretKey: "b"}
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"no endpoint", func(c *Config) { c.Endpoint = "" }, "endpoint"},
		{"scheme", func(c *Config) { c.Endpoint = "https://x" }, "endpoint"},
		{"bad bucket", func(c *Config) { c.Bucket = "No_Such" }, "bucket"},
		{"no secret", func(c *Config) { c.SecretKey = "" }, "secret_key"},
		{"small part", func(c *Config) { c.PartSize = 1 << 20 }, "part_size"},
		{"big single put", func(c *Config) { c.SinglePutSize = 64 << 20 }, "single_put_size"},
		{"negative idle connections", func(c *Config) { c.MaxIdleConns = -1 }, "max_idle_conns"},
		{"negative puts at once", func(c *Config) { c.PutsAtOnce = -1 }, "puts_at_once"},
		{"batches neither auto nor off", func(c *Config) { c.BatchPuts = "on" }, "batch_puts"},
		{"negative batch", func(c *Config) { c.BatchBlobs = -1 }, "batch_blobs"},
		{"negative batches at once", func(c *Config) { c.BatchesAtOnce = -1 }, "batches_at_once"},
	} {
		c := ok
		tc.edit(&c)
		_, err := c.withDefaults()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v; want an error naming %s", tc.name, err, tc.field)
		}
	}
	c, err := Config{Endpoint: "h:1", Bucket: "bkt", AccessKey: "a", SecretKey: "b", Prefix: "mirror"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Prefix != "mirror/" || c.PartSize != DefaultPartSize || c.SinglePutSize != DefaultSinglePutSize || c.MaxIdleConns != DefaultMaxIdleConns || c.PutsAtOnce != DefaultPutsAtOnce ||
		c.BatchPuts != BatchAuto || c.BatchBlobs != DefaultBatchBlobs || c.BatchesAtOnce != DefaultBatchesAtOnce {
		t.Errorf("defaults: %+v", c)
	}
}

func BenchmarkPut(b *testing.B) {
	srv := startServer(b)
	cfg := srv.config()
	s, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	storagetest.BenchmarkPut(b, s)
}

// BenchmarkPutStreamed is BenchmarkPut with every blob streamed through a
// temporary object, the path blobs larger than SinglePutSize take.
func BenchmarkPutStreamed(b *testing.B) {
	srv := startServer(b)
	cfg := srv.config()
	cfg.SinglePutSize = 1
	s, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	storagetest.BenchmarkPut(b, s)
}

// TestSmallBlobOneRequest counts the requests a small blob costs: one
// PUT when it is new, and one PUT when it is stored already, which leaves
// the same bytes and moves the object's time forward (the touch a
// garbage collection heeds, storage.Sweeper).
func TestSmallBlobOneRequest(t *testing.T) {
	srv := startServer(t)
	var puts, others atomic.Int64
	front := watchedProxy(t, srv, func(r *http.Request, forward func()) {
		if r.Method == http.MethodPut {
			puts.Add(1)
		} else {
			others.Add(1)
		}
		forward()
	})
	s := storeThrough(t, srv, front)
	body := []byte("one request per small blob")
	puts.Store(0)
	others.Store(0)
	key := storagetest.Put(t, s, body)
	if p, o := puts.Load(), others.Load(); p != 1 || o != 0 {
		t.Fatalf("a new small blob cost %d PUTs and %d other requests, want 1 PUT", p, o)
	}
	first := listed(t, s, key)
	// The listing gives times to the millisecond: the second commit
	// starts after the first one's millisecond has passed.
	for !time.Now().After(first.ModTime.Add(2 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	puts.Store(0)
	others.Store(0)
	if again := storagetest.Put(t, s, body); again != key {
		t.Fatalf("the same bytes committed as %s, then %s", key, again)
	}
	if p, o := puts.Load(), others.Load(); p != 1 || o != 0 {
		t.Fatalf("a small blob stored already cost %d PUTs and %d other requests, want 1 PUT", p, o)
	}
	second := listed(t, s, key)
	if !second.ModTime.After(first.ModTime) || second.Size != first.Size {
		t.Fatalf("committing the blob again: %+v, then %+v; want the same size, its time moved forward", first, second)
	}
	if got := storagetest.Get(t, s, key); !bytes.Equal(got, body) {
		t.Fatalf("the blob committed twice reads %q", got)
	}
}

// listed is key's entry in the store's listing, whose times have
// milliseconds (a HEAD's Last-Modified has whole seconds).
func listed(t *testing.T, s *Store, key string) storage.Info {
	t.Helper()
	var found storage.Info
	err := s.List(context.Background(), func(in storage.Info) error {
		if in.Key == key {
			found = in
		}
		return nil
	})
	if err != nil || found.Key == "" {
		t.Fatalf("listing the bucket for %s: found %+v, %v", key, found, err)
	}
	return found
}

// TestConcurrentPutsKeepConnections: rounds of concurrent commits, as the
// fetch workers make, reuse the connections of the round before instead
// of connecting and closing one per request past a small idle pool.
func TestConcurrentPutsKeepConnections(t *testing.T) {
	srv := startServer(t)
	var conns atomic.Int64
	target, _ := url.Parse("http://" + srv.endpoint)
	front := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
	front.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	front.Start()
	defer front.Close()
	s := storeThrough(t, srv, front)
	const inFlight, rounds = 48, 6
	conns.Store(0)
	for r := range rounds {
		errs := make([]error, inFlight)
		var wg sync.WaitGroup
		for i := range inFlight {
			wg.Go(func() { _, errs[i] = storagetest.PutErr(s, fmt.Appendf(nil, "round %d blob %d", r, i)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	// Each round needs at most inFlight connections, and the next finds
	// them idle: inFlight in all, give or take a connection the client
	// had not put back yet when the next round began. minio-go's default
	// pool of 16 opens about 16 + rounds * (inFlight - 16), 208 here.
	if n := conns.Load(); n > 2*inFlight {
		t.Errorf("%d rounds of %d concurrent commits opened %d connections, want about %d", rounds, inFlight, n, inFlight)
	}
}

// With no keys in the configuration nor the environment, the AWS shared
// credentials file of the chain signs the requests.
func TestCredentialsFromSharedFile(t *testing.T) {
	srv := startServer(t)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN", "MINIO_ROOT_USER", "MINIO_ROOT_PASSWORD", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	file := filepath.Join(t.TempDir(), "credentials")
	body := "[default]\naws_access_key_id = " + srv.accessKey + "\naws_secret_access_key = " + srv.secretKey + "\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", file)
	cfg := srv.config()
	cfg.AccessKey, cfg.SecretKey = "", ""
	if _, err := New(context.Background(), cfg); err != nil {
		t.Fatalf("New with credentials from the shared file: %v", err)
	}
}

func TestCAFileMustHoldACertificate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(context.Background(), Config{Endpoint: "127.0.0.1:1", Bucket: "viaduct", AccessKey: "a", SecretKey: "b", TLS: true, CAFile: file})
	if err == nil || !strings.Contains(err.Error(), "ca_file") {
		t.Fatalf("a CA file without a certificate: %v; want an error naming ca_file", err)
	}
}

// TestPutsAtOnce: with batches off, however many commits run at once, no
// more single PUTs than puts_at_once reach the server together, and every
// blob is stored.
func TestPutsAtOnce(t *testing.T) {
	srv := startServer(t)
	var now, most atomic.Int64
	front := watchedProxy(t, srv, func(r *http.Request, forward func()) {
		if r.Method == http.MethodPut {
			n := now.Add(1)
			defer now.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		}
		forward()
	})
	s := storeThrough(t, srv, front, func(c *Config) { c.PutsAtOnce, c.BatchPuts = 3, BatchOff })
	const commits = 40
	keys := make([]string, commits)
	errs := make([]error, commits)
	var wg sync.WaitGroup
	for i := range commits {
		wg.Go(func() { keys[i], errs[i] = storagetest.PutErr(s, fmt.Appendf(nil, "blob %d", i)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > 3 {
		t.Errorf("%d PUTs reached the server at once, want at most 3", m)
	}
	for i, key := range keys {
		if got := storagetest.Get(t, s, key); string(got) != fmt.Sprintf("blob %d", i) {
			t.Errorf("blob %d reads %q", i, got)
		}
	}
}
