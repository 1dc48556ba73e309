package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// requests counts what reaches the server: PUTs of one blob, batches
// (PUTs of a tar to unpack), HEADs, and the most PUTs of either kind under
// way at once.
type requests struct {
	puts, batches, heads, others atomic.Int64
	now, most                    atomic.Int64
}

func (c *requests) watch(r *http.Request, forward func()) {
	switch {
	case r.Method == http.MethodPut && r.Header.Get(extractHeader) == "true":
		c.batches.Add(1)
	case r.Method == http.MethodPut:
		c.puts.Add(1)
	case r.Method == http.MethodHead:
		c.heads.Add(1)
	default:
		c.others.Add(1)
	}
	if r.Method == http.MethodPut {
		n := c.now.Add(1)
		defer c.now.Add(-1)
		for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
		}
	}
	forward()
}

func (c *requests) reset() {
	for _, n := range []*atomic.Int64{&c.puts, &c.batches, &c.heads, &c.others, &c.most} {
		n.Store(0)
	}
}

// commitQueued commits the bodies at once, every commit queued before the
// first batch goes (the test holds the batch slots until then), and
// returns their keys in order. The batches are then as full as
// Config.BatchBlobs lets them be.
func commitQueued(t *testing.T, s *Store, bodies [][]byte) []string {
	t.Helper()
	b := s.batches
	if !b.on.Load() {
		t.Fatal("the store sends no batches")
	}
	for range cap(b.slots) {
		b.slots <- struct{}{}
	}
	// No commit leaves the queue while the test holds the slots: the
	// one that makes it len(bodies) long is the last.
	all := make(chan struct{})
	b.queued = func(n int) {
		if n == len(bodies) {
			close(all)
		}
	}
	defer func() { b.queued = nil }()
	keys := make([]string, len(bodies))
	errs := make([]error, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Go(func() { keys[i], errs[i] = storagetest.PutErr(s, body) })
	}
	<-all
	for range cap(b.slots) {
		<-b.slots
	}
	for range cap(b.slots) {
		if b.acquire() {
			go b.run()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return keys
}

// wantStored checks that each key's blob holds its body.
func wantStored(t *testing.T, s *Store, keys []string, in [][]byte) {
	t.Helper()
	for i, key := range keys {
		if got := storagetest.Get(t, s, key); !bytes.Equal(got, in[i]) {
			t.Errorf("blob %d (%s) reads %q, want %q", i, key, got, in[i])
		}
	}
}

func bodies(n int, prefix string) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%s %d %s", prefix, i, strings.Repeat("x", i*37))
	}
	return out
}

// TestBatchesGatherConcurrentCommits: commits made while the server is
// busy go out together, a tar per batch that the server unpacks into an
// object per blob, each holding its bytes under its key and dated by the
// server; no more batches are under way at once than batches_at_once,
// and the same bytes committed twice get one key.
func TestBatchesGatherConcurrentCommits(t *testing.T) {
	srv := startServer(t)
	var seen requests
	front := watchedProxy(t, srv, seen.watch)
	s := storeThrough(t, srv, front, withRegistry, func(c *Config) { c.BatchBlobs, c.BatchesAtOnce = 16, 2 })
	in := bodies(100, "batched blob")
	in = append(in, in[3]) // the same bytes twice
	seen.reset()
	start := time.Now()
	keys := commitQueued(t, s, in)

	// 101 commits, 16 a batch: 7 batches, each confirmed by a HEAD.
	if b, p, h := seen.batches.Load(), seen.puts.Load(), seen.heads.Load(); b != 7 || p != 0 || h != 7 {
		t.Errorf("101 queued commits cost %d batches, %d single PUTs and %d HEADs; want 7 batches, each with a HEAD", b, p, h)
	}
	if m := seen.most.Load(); m > 2 {
		t.Errorf("%d batches reached the server at once, want at most 2", m)
	}
	wantCounts(t, s, 7, 0, 0, 1)
	if keys[100] != keys[3] {
		t.Errorf("the same bytes committed as %s and %s", keys[3], keys[100])
	}
	wantStored(t, s, keys, in)
	for _, key := range []string{keys[0], keys[99]} {
		at := listed(t, s, key).ModTime
		if at.Before(start.Add(-time.Minute)) || at.After(time.Now().Add(time.Minute)) {
			t.Errorf("blob %s is dated %s; the batch went at %s", key, at, start)
		}
	}
	wantNoTemporaries(t, s)

	// A lone commit is a PUT of its own.
	seen.reset()
	storagetest.Put(t, s, []byte("alone"))
	if b, p := seen.batches.Load(), seen.puts.Load(); b != 0 || p != 1 {
		t.Errorf("a lone commit cost %d batches and %d PUTs, want one PUT", b, p)
	}
	wantCounts(t, s, 7, 0, 1, 1)
}

// withRegistry gives the store a registry of its own, which wantCounts
// reads.
func withRegistry(c *Config) { c.Registerer = prometheus.NewRegistry() }

// wantCounts checks the store's metrics, as the node's /metrics shows
// them: batches confirmed and resent, small blobs sent in a PUT of their
// own, and whether batches are on.
func wantCounts(t *testing.T, s *Store, confirmed, resent, puts, batching float64) {
	t.Helper()
	reg := s.cfg.Registerer.(prometheus.Gatherer)
	var got []float64
	for _, m := range []struct {
		name   string
		labels map[string]string
	}{
		{"viaduct_s3_batches_total", map[string]string{"outcome": batchConfirmed}},
		{"viaduct_s3_batches_total", map[string]string{"outcome": batchResent}},
		{"viaduct_s3_small_puts_total", nil},
		{"viaduct_s3_batching", nil},
	} {
		v, ok := testutil.Metric(t, reg, m.name, m.labels)
		if !ok {
			t.Fatalf("%s%v is not registered", m.name, m.labels)
		}
		got = append(got, v)
	}
	if want := []float64{confirmed, resent, puts, batching}; !slices.Equal(got, want) {
		t.Errorf("batches confirmed, resent, small PUTs, batching: %v, want %v", got, want)
	}
}

// TestBatchChangedOnTheWay: a batch whose bytes change on the way (here
// in the proxy in front of the server) is found out by the md5 of what
// the server read, and its blobs are sent again one by one, each with its
// Content-MD5: every blob ends with its own bytes, the one the server
// unpacked wrongly included.
func TestBatchChangedOnTheWay(t *testing.T) {
	srv := startServer(t)
	var seen requests
	var armed, tampered atomic.Bool // armed once the probe has passed
	front := watchedProxy(t, srv, func(r *http.Request, forward func()) {
		if r.Header.Get(extractHeader) == "true" && armed.Load() && tampered.CompareAndSwap(false, true) {
			body, _ := io.ReadAll(r.Body)
			body[512] ^= 1 // the first byte of the first blob
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		seen.watch(r, forward)
	})
	s := storeThrough(t, srv, front, withRegistry, func(c *Config) { c.BatchBlobs, c.BatchesAtOnce = 10, 1 })
	in := bodies(30, "tampered batch")
	seen.reset()
	armed.Store(true)
	keys := commitQueued(t, s, in)
	if !tampered.Load() {
		t.Fatal("no batch went through the proxy")
	}
	if b, p := seen.batches.Load(), seen.puts.Load(); b != 3 || p != 10 {
		t.Errorf("30 commits with one batch changed on the way: %d batches and %d single PUTs, want 3 batches and the changed one's 10 blobs again", b, p)
	}
	wantStored(t, s, keys, in)
	if !s.batches.on.Load() {
		t.Error("batches were turned off by a batch changed on the way")
	}
	wantCounts(t, s, 2, 1, 10, 1)
	wantNoTemporaries(t, s)
}

// notUnpacking is a proxy in front of srv that, while off is set, stores
// a tar sent to be unpacked as the object it was sent as, the way a
// server without that extension does (the proxy PUTs it to srv itself,
// since the request's signature covers the header asking to unpack).
func notUnpacking(t *testing.T, srv server, seen *requests, off *atomic.Bool) string {
	t.Helper()
	c, err := minio.New(srv.endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.accessKey, srv.secretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse("http://" + srv.endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.watch(r, func() {
			if !off.Load() || r.Header.Get(extractHeader) != "true" {
				proxy.ServeHTTP(w, r)
				return
			}
			bucket, object, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			info, err := c.PutObject(r.Context(), bucket, object, r.Body, r.ContentLength, minio.PutObjectOptions{})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("ETag", `"`+info.ETag+`"`)
		})
	}))
	t.Cleanup(front.Close)
	return strings.TrimPrefix(front.URL, "http://")
}

// TestNoBatchesWhereTheServerDoesNotUnpack: the probe at start finds that
// the server stores a tar as it is; the store then sends one PUT per
// blob, and the probe leaves nothing behind.
func TestNoBatchesWhereTheServerDoesNotUnpack(t *testing.T) {
	srv := startServer(t)
	var seen requests
	off := new(atomic.Bool)
	off.Store(true)
	cfg := srv.config()
	withRegistry(&cfg)
	cfg.Endpoint = notUnpacking(t, srv, &seen, off)
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s.batches.on.Load() {
		t.Fatal("batches on with a server that stores a tar as it is")
	}
	wantNoTemporaries(t, s)
	seen.reset()
	in := bodies(20, "one by one")
	keys := make([]string, len(in))
	errs := make([]error, len(in))
	var wg sync.WaitGroup
	for i, body := range in {
		wg.Go(func() { keys[i], errs[i] = storagetest.PutErr(s, body) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if p, b := seen.puts.Load(), seen.batches.Load(); p != 20 || b != 0 {
		t.Errorf("20 commits cost %d PUTs and %d batches, want 20 PUTs", p, b)
	}
	wantCounts(t, s, 0, 0, 20, 0)
	wantStored(t, s, keys, in)
}

// TestBatchesStopWhenTheServerStopsUnpacking: a server that unpacked the
// probe but stores a later batch as it is (another server behind the same
// endpoint) is found out by the HEAD after the batch: the blobs of that
// batch and of all after it go one by one, every commit succeeds with its
// bytes stored, and the stored tar is removed.
func TestBatchesStopWhenTheServerStopsUnpacking(t *testing.T) {
	srv := startServer(t)
	var seen requests
	off := new(atomic.Bool)
	cfg := srv.config()
	withRegistry(&cfg)
	cfg.Endpoint = notUnpacking(t, srv, &seen, off)
	cfg.BatchBlobs, cfg.BatchesAtOnce = 8, 1
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	off.Store(true)
	in := bodies(24, "no longer unpacked")
	seen.reset()
	keys := commitQueued(t, s, in)
	if s.batches.on.Load() {
		t.Error("batches still on after the server stored one as it is")
	}
	if b, p := seen.batches.Load(), seen.puts.Load(); b != 1 || p != 24 {
		t.Errorf("%d batches and %d single PUTs, want the first batch only, then 24 PUTs", b, p)
	}
	wantCounts(t, s, 0, 1, 24, 0)
	wantStored(t, s, keys, in)
	wantNoTemporaries(t, s)
}
