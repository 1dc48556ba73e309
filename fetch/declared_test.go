package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// countingBlobs counts the bytes written to temporary blobs.
type countingBlobs struct {
	storage.Blobs
	written atomic.Int64
}

func (c *countingBlobs) Create(ctx context.Context, want storage.Expect) (storage.BlobWriter, error) {
	w, err := c.Blobs.Create(ctx, want)
	if err != nil {
		return nil, err
	}
	return &countingWriter{BlobWriter: w, n: &c.written}, nil
}

type countingWriter struct {
	storage.BlobWriter
	n *atomic.Int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.BlobWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// hostileBitstreams serves every path as 300,000 times its declared length
// of 1,000 bytes, with a Content-Length (/cl/...), without one (/chunked/...),
// or as a gzip-encoded stream nobody asked for (/gzip/...), and counts
// the bytes each request managed to send.
type hostileBitstreams struct {
	mu   sync.Mutex
	sent map[string]int64
	gz   []byte
}

const (
	declaredLen = 1000
	servedLen   = 300_000 * declaredLen
)

func (h *hostileBitstreams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	var n int64
	defer func() {
		h.mu.Lock()
		h.sent[r.URL.Path] += n
		h.mu.Unlock()
	}()
	switch {
	case strings.HasPrefix(r.URL.Path, "/gzip/"):
		w.Header().Set("Content-Encoding", "gzip")
		for n < servedLen {
			k, err := w.Write(h.gz)
			n += int64(k)
			if err != nil {
				return
			}
		}
		return
	case strings.HasPrefix(r.URL.Path, "/cl/"):
		w.Header().Set("Content-Length", strconv.Itoa(servedLen))
	}
	for n < servedLen {
		k, err := w.Write(chunk)
		n += int64(k)
		if err != nil {
			return
		}
	}
}

// TestBodyBoundedByDeclaredLength: a bitstream declared as 1,000 bytes and
// served as 300 MB (with or without Content-Length), and one served with
// a gzip encoding that was not asked for, are refused having read at most
// a byte past the declared length, having written no more than that to a
// temporary blob, which is discarded: nothing reaches the store.
func TestBodyBoundedByDeclaredLength(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	h := &hostileBitstreams{sent: map[string]int64{}, gz: zb.Bytes()}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	q := startQueue(t)
	store, root := dirStore(t)
	blobs := &countingBlobs{Blobs: store}
	length := int64(declaredLen)
	var cs []viaduct.Change
	for _, p := range []string{"/cl/a", "/chunked/a", "/gzip/a"} {
		cs = append(cs, viaduct.Change{Source: testSource, Collection: testCollection, URI: srv.URL + p, Op: resourcesync.Created,
			Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Length: &length})
	}
	publishAll(t, q, cs)
	runPool(t, testConfig(), queueDeps(t, q, blobs, clientsForURL(t, srv.URL)))

	eventually(t, 60*time.Second, "three dead letters", func() bool { return len(deadLetters(t, q)) == 3 })
	for _, d := range deadLetters(t, q) {
		p := strings.TrimPrefix(d.Evidence["uri"], srv.URL)
		want := "mismatch"
		if strings.HasPrefix(p, "/gzip/") {
			want = "upstream"
		}
		if !strings.HasPrefix(d.Reason, want) {
			t.Errorf("%s dead-lettered as %q, want %s", p, d.Reason, want)
		}
		t.Logf("%s: %s, evidence %v", p, d.Reason, d.Evidence)
	}
	// Each of three deliveries may write the declared length before the
	// byte past it is seen; an unrequested encoding writes nothing.
	if w := blobs.written.Load(); w > 2*3*declaredLen {
		t.Errorf("%d bytes written to temporary blobs, want at most the declared length per attempt", w)
	}
	// The server's writes land in socket buffers before the client stops
	// reading: a few MB at most, never the 300 MB it tried to send.
	h.mu.Lock()
	for p, n := range h.sent {
		if n > 32<<20 {
			t.Errorf("%s: the Source sent %d bytes, want the reading stopped near the declared %d", p, n, declaredLen)
		}
		t.Logf("%s: the Source sent %d bytes in all", p, n)
	}
	h.mu.Unlock()
	if got := blobFiles(t, store); len(got) != 0 {
		t.Errorf("store holds %v, want nothing", got)
	}
	tmp, _ := os.ReadDir(filepath.Join(root, "tmp"))
	if len(tmp) != 0 {
		t.Errorf("temporary objects left behind: %d", len(tmp))
	}
}
