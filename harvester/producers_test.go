package harvester

import (
	"bufio"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// producerHost is the authority the corpus documents are written with;
// the test server puts its own in its place as it serves them.
const producerHost = "http://producer.test"

// producer serves one producer's corpus (testdata/producers/<name>/) from
// loopback in the producer's own layout: state v1, then v2, each a tree
// of the documents and bitstreams as the producer serves them at that
// time (a query ?q is the file path@q), and EXPECT, what the producer
// lists then ("uri md5" lines).
type producer struct {
	dir   string
	mu    sync.Mutex
	state string
	URL   string
}

func startProducer(t *testing.T, name string) *producer {
	t.Helper()
	p := &producer{dir: filepath.Join("testdata", "producers", name), state: "v1"}
	ts := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(ts.Close)
	p.URL = ts.URL
	return p
}

func (p *producer) setState(s string) { p.mu.Lock(); p.state = s; p.mu.Unlock() }

func (p *producer) file(path, query string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := filepath.Join(p.dir, p.state, filepath.FromSlash(strings.TrimPrefix(path, "/")))
	if query != "" {
		f += "@" + query
	}
	return f
}

func (p *producer) serve(w http.ResponseWriter, r *http.Request) {
	b, err := os.ReadFile(p.file(r.URL.Path, r.URL.RawQuery))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if strings.HasPrefix(string(b), "<?xml") {
		w.Header().Set("Content-Type", "application/xml")
		b = []byte(strings.ReplaceAll(string(b), producerHost, p.URL))
	}
	w.Write(b)
}

// expect reads what the producer lists in its current state: URI to md5.
func (p *producer) expect(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(p.file("/EXPECT", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		uri, sum, _ := strings.Cut(sc.Text(), " ")
		out[strings.Replace(uri, producerHost, p.URL, 1)] = sum
	}
	return out
}

// producerCases are the producers of the corpus: where the harvest
// starts, and what the second poll must have found on the way.
var producerCases = []struct {
	name, start string
	// stale are paths the producer removed without a word in its Change
	// Lists (Hyrax lists no deletions): held after the second poll until
	// the baseline schedule comes round, which the test then lets happen.
	stale []string
	check func(t *testing.T, h *Harvester, st SourceStatus)
}{
	{"dspace", "/", nil, func(t *testing.T, h *Harvester, st SourceStatus) {
		// Two Change Lists were written between the polls and the
		// Capability List names only the newest: its Index closes the gap.
		wantGap(t, st, GapIndex)
		wantWarning(t, st, tolChangeListIndexEntry)
	}},
	{"hyrax", "/", []string{"/concern/generic_works/w3"}, func(t *testing.T, h *Harvester, st SourceStatus) {
		wantWarning(t, st, tolOutOfOrder) // newest first
	}},
	{"weko", "/resync/capabilitylist.xml", nil, func(t *testing.T, h *Harvester, st SourceStatus) {
		wantWarning(t, st, tolDuplicateCapability)
	}},
	{"atom", "/", nil, func(t *testing.T, h *Harvester, st SourceStatus) {
		wantWarning(t, st, tolOutOfOrder)
	}},
	{"timbuctoo", "/v5/resourcesync/sourceDescription.xml", nil, func(t *testing.T, h *Harvester, st SourceStatus) {
		wantWarning(t, st, tolSeveralSets)
	}},
	{"rsengine", "/RS/dhenry/climatewalker/capabilitylist.xml", nil, nil},
	{"resync2015", "/capabilitylist.xml", nil, func(t *testing.T, h *Harvester, st SourceStatus) {
		// Two runs between polls; the Source keeps only the latest run's
		// Change List, which starts after the cursor: a baseline closes
		// the gap and finds the deletion the replaced list held.
		wantGap(t, st, GapBaseline)
	}},
	{"push2016", "/capabilitylist.xml", nil, func(t *testing.T, h *Harvester, st SourceStatus) {
		wantWarning(t, st, tolChangeListOnly)
	}},
}

// TestProducers harvests each producer of the corpus twice, as it first
// is and after it changed the way it changes, and checks after each poll
// that the catalog holds exactly what the producer lists, each bitstream
// as declared matching the bytes the producer serves.
func TestProducers(t *testing.T) {
	for _, pc := range producerCases {
		t.Run(pc.name, func(t *testing.T) {
			e := newEnv(t)
			p := startProducer(t, pc.name)
			daily := "@daily"
			h, _ := e.harvester(Defaults(), SourceConfig{Name: pc.name, URL: p.URL + pc.start, AllowLoopback: yes(), BaselineSchedule: &daily})
			poll := func() {
				sync1(t, h, pc.name)
				changes := e.drain()
				verifyBytes(t, p, changes)
				applyFetched(t, e, p, changes)
			}
			for _, state := range []string{"v1", "v2"} {
				p.setState(state)
				poll()
				want := p.expect(t)
				if state == "v2" {
					for _, s := range pc.stale {
						want[p.URL+s] = "stale"
					}
				}
				assertHolds(t, e.cat, pc.name, want)
			}
			if len(pc.stale) > 0 {
				// The baseline schedule comes round: the last baseline was
				// two days ago, as far as the cursor says.
				ago := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339Nano)
				if err := e.cat.SetCursor(context.Background(), pc.name, curBaseline, ago); err != nil {
					t.Fatal(err)
				}
				poll()
				assertHolds(t, e.cat, pc.name, p.expect(t))
			}
			st, _ := h.SourceStatus(context.Background(), pc.name)
			if pc.check != nil {
				pc.check(t, h, st)
			}
		})
	}
}

// verifyBytes checks every change's declared md5 (hex or base64) against
// the bytes the producer serves at its URI: what a fetch worker verifies.
func verifyBytes(t *testing.T, p *producer, changes []*viaduct.Change) {
	t.Helper()
	for _, c := range changes {
		if c.Op == resourcesync.Deleted {
			continue
		}
		b, err := os.ReadFile(p.file(strings.TrimPrefix(c.URI, p.URL), ""))
		if err != nil {
			t.Fatalf("%s %s: the producer serves no such bitstream", c.Op, c.URI)
		}
		sum := md5.Sum(b)
		d := c.Hash.Get(resourcesync.MD5)
		if d == "" {
			continue
		}
		if d != hex.EncodeToString(sum[:]) && d != base64.StdEncoding.EncodeToString(sum[:]) {
			t.Fatalf("%s: declared md5 %s, the bytes served have %x", c.URI, d, sum)
		}
	}
}

// applyFetched plays the fetch workers: each change is recorded with
// the digests and length of the bytes the producer serves.
func applyFetched(t *testing.T, e *env, p *producer, changes []*viaduct.Change) {
	t.Helper()
	for _, c := range changes {
		ev := &viaduct.Event{Source: c.Source, Collection: c.Collection, URI: c.URI, Op: c.Op, Type: c.Type, Upstream: *c}
		if c.Op != resourcesync.Deleted {
			b, err := os.ReadFile(p.file(strings.TrimPrefix(c.URI, p.URL), ""))
			if err != nil {
				t.Fatalf("%s: %v", c.URI, err)
			}
			s, m := sha256.Sum256(b), md5.Sum(b)
			ev.SHA256, ev.MD5, ev.Length = hex.EncodeToString(s[:]), hex.EncodeToString(m[:]), int64(len(b))
		}
		e.applied++
		if err := e.cat.Apply(context.Background(), e.applied, time.Now(), ev); err != nil {
			t.Fatalf("apply %s %s: %v", c.Op, c.URI, err)
		}
	}
}

// assertHolds checks that the Source's resources in the catalog are
// exactly want.
func assertHolds(t *testing.T, cat *catalog.Catalog, source string, want map[string]string) {
	t.Helper()
	var got []string
	err := cat.SourceHeld(context.Background(), source, source, func(r *catalog.HeldEntry) error {
		got = append(got, r.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var w []string
	for u := range want {
		w = append(w, u)
	}
	slices.Sort(got)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		t.Fatalf("catalog holds\n  %s\nthe producer lists\n  %s", strings.Join(got, "\n  "), strings.Join(w, "\n  "))
	}
}

func wantGap(t *testing.T, st SourceStatus, how string) {
	t.Helper()
	for _, g := range st.Gaps {
		if g.ClosedBy == how {
			return
		}
	}
	t.Fatalf("status shows gaps %+v, want one closed by %s", st.Gaps, how)
}

func wantWarning(t *testing.T, st SourceStatus, kind string) {
	t.Helper()
	for _, w := range st.Warnings {
		if w.Kind == kind {
			return
		}
	}
	t.Fatalf("status shows warnings %+v, want %s", st.Warnings, kind)
}
