package node

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/harvester"
)

// producerDir is the harvester's producers' corpus (see its README).
var producerDir = filepath.Join("..", "harvester", "testdata", "producers")

// corpusSource serves one producer of the corpus from loopback, state v1
// then v2, with the test server's authority in place of the corpus's.
type corpusSource struct {
	dir, URL string
	mu       sync.Mutex
	state    string
}

func serveProducer(t *testing.T, name string) *corpusSource {
	t.Helper()
	s := &corpusSource{dir: filepath.Join(producerDir, name), state: "v1"}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(s.file(r.URL.Path, r.URL.RawQuery))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(string(b), "<?xml") {
			w.Header().Set("Content-Type", "application/xml")
			b = []byte(strings.ReplaceAll(string(b), "http://producer.test", s.URL))
		}
		w.Write(b)
	}))
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

func (s *corpusSource) file(path, query string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := filepath.Join(s.dir, s.state, filepath.FromSlash(strings.TrimPrefix(path, "/")))
	if query != "" {
		f += "@" + query
	}
	return f
}

// expect is what the producer lists in its current state: URI to md5.
func (s *corpusSource) expect(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(s.file("/EXPECT", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		uri, sum, _ := strings.Cut(sc.Text(), " ")
		out[strings.Replace(uri, "http://producer.test", s.URL, 1)] = sum
	}
	return out
}

// TestProducersMirrored runs a node over every producer of the corpus,
// twice (as it first serves its Source, then after it changed the way it
// changes): after each pass the node's catalog holds exactly what the
// producer lists, each with the md5 of the bytes the fetch workers
// fetched and stored.
func TestProducersMirrored(t *testing.T) {
	starts := map[string]string{
		"dspace": "/", "hyrax": "/", "weko": "/resync/capabilitylist.xml", "atom": "/",
		"timbuctoo":  "/v5/resourcesync/sourceDescription.xml",
		"rsengine":   "/RS/dhenry/climatewalker/capabilitylist.xml",
		"resync2015": "/capabilitylist.xml", "push2016": "/capabilitylist.xml",
	}
	for name, start := range starts {
		t.Run(name, func(t *testing.T) {
			src := serveProducer(t, name)
			yes, never := true, ""
			sc := harvester.SourceConfig{Name: name, URL: src.URL + start, Schedule: "@every 1h", AllowLoopback: &yes, BaselineSchedule: &never}
			n := startNode(t, testConfig(t.TempDir(), sc), nil)
			for _, state := range []string{"v1", "v2"} {
				src.mu.Lock()
				src.state = state
				src.mu.Unlock()
				mustSync(t, n, name)
				waitSettled(t, n, 30*time.Second)
				want := src.expect(t)
				if state == "v2" && name == "hyrax" {
					// Hyrax lists no deletions: the one it made is held until a
					// baseline, which the operator (or baseline_schedule) runs.
					if code, body := adminCall(t, "POST", n.AdminURL()+"/admin/sources/hyrax/rebaseline?wait=true", ""); code != http.StatusOK {
						t.Fatalf("rebaseline: %d %s", code, body)
					}
					waitSettled(t, n, 30*time.Second)
				}
				checkProducer(t, n, name, want)
			}
		})
	}
}

// checkProducer compares the collection with what the producer lists.
func checkProducer(t *testing.T, n *Node, collection string, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	for uri, sum := range want {
		r, err := n.Catalog().Resource(ctx, collection, uri)
		if err != nil || r.Deleted || r.MD5 != sum {
			t.Fatalf("%s: catalog has %+v (%v), want md5 %s", uri, r, err, sum)
		}
	}
	held := 0
	err := n.Catalog().SourceResources(ctx, collection, collection, func(r *catalog.Resource) error {
		held++
		if _, ok := want[r.URI]; !ok {
			t.Errorf("catalog holds %s, which the producer does not list", r.URI)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if held != len(want) {
		t.Fatalf("catalog holds %d resources, the producer lists %d", held, len(want))
	}
}
