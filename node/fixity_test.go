package node

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/viaduct-mirror/viaduct/fixity"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// gatedSource serves a simulated Source whose answer for one path can be
// held back until the test lets it go.
type gatedSource struct {
	*httptest.Server
	mu   sync.Mutex
	path string
	open chan struct{}
}

func startGatedSource(t *testing.T, cfg sim.Config) *gatedSource {
	t.Helper()
	src, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedSource{}
	h := src.Handler()
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		held, open := g.path != "" && r.URL.Path == g.path, g.open
		g.mu.Unlock()
		if held {
			select {
			case <-open:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// hold keeps GETs of path waiting until the returned func is called.
func (g *gatedSource) hold(path string) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.path, g.open = path, make(chan struct{})
	open := g.open
	return sync.OnceFunc(func() { close(open) })
}

// TestFixityRepairsABadCopy: a bitstream whose stored bytes change behind
// the node's back (a bit flipped in the directory store's pack file, an
// object overwritten in MinIO) is found by the audit, counted, moved out
// of the way, and fetched again from the Source through the fetch
// workers. While the repair waits for the Source, a Destination asking
// for the bitstream is refused, never handed the wrong bytes; once it is
// back the right bytes are served, and EVENTS has no new event, since the
// aggregator's copy is what it was.
func TestFixityRepairsABadCopy(t *testing.T) {
	stores(t, "fixity", func(t *testing.T, blobs func(*Config)) {

		src := startGatedSource(t, sim.Config{Resources: 20, Seed: 11, MinSize: 512, MaxSize: 2048})
		yes := true
		cfg := testConfig(t.TempDir(), harvester.SourceConfig{Name: "s", URL: src.URL, Schedule: "@every 1h", AllowLoopback: &yes})
		cfg.Fixity = fixity.Config{BytesPerSecond: 64 << 20, BlobsPerSecond: 1 << 20, Every: 100 * time.Millisecond}
		blobs(&cfg)
		n := startNode(t, cfg, nil)
		mustSync(t, n, "s")
		waitSettled(t, n, time.Minute)

		_, entries := resourceList(t, n.URL()+"/s/resourcelist.xml")
		if len(entries) != 20 {
			t.Fatalf("the node lists %d resources; want 20", len(entries))
		}
		e := entries[3]
		code, good := get(t, e.Loc)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", e.Loc, code)
		}
		key := hexSHA256(good)
		origin := ""
		for _, l := range e.Links {
			if l.Rel == "via" {
				origin = l.Href
			}
		}
		req, _ := http.NewRequest("GET", origin, nil)
		release := src.hold(req.URL.Path)
		defer release()
		events := streamMsgs(t, n.Queue(), queue.StreamEvents)

		bad := bytes.Clone(good)
		bad[len(bad)/2] ^= 0x04
		corruptBlob(t, n, key, good, bad)

		waitFor(t, time.Minute, "the audit to find the bad copy", func() bool { return n.Fixity().Bad >= 1 })
		for range 5 {
			code, body := get(t, e.Loc)
			if code == http.StatusOK && !bytes.Equal(body, good) {
				t.Fatalf("GET %s while its repair waits for the Source: 200 with %d bytes that are not the copy (sha-256 %s)", e.Loc, len(body), hexSHA256(body))
			}
			if code != http.StatusInternalServerError {
				t.Fatalf("GET %s while its repair waits for the Source: %d; want 500 (the copy is quarantined)", e.Loc, code)
			}
		}
		if v, _ := testutil.Metric(t, n.reg, "viaduct_fixity_blobs_checked_total", map[string]string{"result": "bad"}); v != 1 {
			t.Errorf("viaduct_fixity_blobs_checked_total{result=bad} = %v; want 1", v)
		}
		if st := n.Fixity(); st.RepairsPending != 1 {
			t.Errorf("status %+v; want one repair pending", st)
		}

		release()
		waitFor(t, time.Minute, "the repaired copy to be served", func() bool {
			code, body := get(t, e.Loc)
			if code == http.StatusOK && !bytes.Equal(body, good) {
				t.Fatalf("GET %s after the repair: wrong bytes", e.Loc)
			}
			return code == http.StatusOK
		})
		waitFor(t, time.Minute, "the audit to see the repair back", func() bool { return n.Fixity().RepairsPending == 0 })
		waitSettled(t, n, time.Minute)
		if got := streamMsgs(t, n.Queue(), queue.StreamEvents); got != events {
			t.Errorf("EVENTS went from %d to %d messages; a repair that restores the same bytes publishes no event", events, got)
		}
		if v, _ := testutil.Metric(t, n.reg, "viaduct_fixity_repairs_requested_total", nil); v != 1 {
			t.Errorf("viaduct_fixity_repairs_requested_total = %v; want 1", v)
		}
		if dl := deadLetters(t, n); len(dl) != 0 {
			t.Errorf("%d dead letters, first: %s %v", len(dl), dl[0].Reason, dl[0].Evidence)
		}

	})
}

// corruptBlob replaces the stored bytes of key (good) with bad, of the
// same length, behind the store's back.
func corruptBlob(t *testing.T, n *Node, key string, good, bad []byte) {
	t.Helper()
	if n.cfg.Blobs.Kind == "s3" {
		c := n.cfg.Blobs.S3
		mc, err := minio.New(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")})
		if err != nil {
			t.Fatal(err)
		}
		_, err = mc.PutObject(context.Background(), c.Bucket, c.Prefix+"blobs/"+key, bytes.NewReader(bad), int64(len(bad)), minio.PutObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if p := filepath.Join(n.cfg.Blobs.Dir, key[:2], key); fileExists(p) {
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	packs, _ := filepath.Glob(filepath.Join(n.cfg.Blobs.Dir, "packs", "*.pack"))
	for _, p := range packs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(data, good); i >= 0 {
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(bad, int64(i)); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("blob %s is neither a file nor in a pack", key)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// get returns the status and body of a GET.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, b
}
