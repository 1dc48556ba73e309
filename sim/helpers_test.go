package sim

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// clock is a settable time for tests that control Change List periods.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// serve starts an httptest server for a new Source made from cfg.
func serve(t testing.TB, cfg Config) (*Source, string) {
	t.Helper()
	src, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(src.Handler())
	t.Cleanup(ts.Close)
	if err := src.SetBaseURL(ts.URL); err != nil {
		t.Fatal(err)
	}
	return src, ts.URL
}

// get fetches url and returns the response with its body read.
func get(t testing.TB, url string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp, body
}

// doc is a document as the resourcesync reader sees it.
type doc struct {
	Header  *resourcesync.Header
	Entries []*resourcesync.Entry
}

// read fetches and parses the document at url, which must be served 200.
func read(t testing.TB, url string) doc {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	d, err := parse(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return d
}

func parse(r io.Reader) (doc, error) {
	rd, err := resourcesync.NewReader(r, resourcesync.DefaultLimits())
	if err != nil {
		return doc{}, err
	}
	d := doc{Header: rd.Header()}
	for {
		e, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return d, nil
		}
		if err != nil {
			return d, err
		}
		d.Entries = append(d.Entries, e)
	}
}

// eventually waits for cond with the project's one polling helper.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}
