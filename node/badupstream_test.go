package node

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// badBitstreams are the bitstream faults of TestBadUpstream and the start
// of the dead-letter reason each must produce.
var badBitstreams = []struct {
	path   string
	fault  sim.Fault
	reason string
}{
	{"/res/1", sim.Fault{Status: http.StatusNotFound}, "not_found"},
	{"/res/2", sim.Fault{Status: http.StatusServiceUnavailable}, "transient"},
	{"/res/3", sim.Fault{WrongHash: true}, "mismatch"},
	{"/res/4", sim.Fault{WrongLength: true}, "mismatch"},
	{"/res/5", sim.Fault{Truncate: true}, "truncated"},
	{"/res/6", sim.Fault{Delay: 3 * time.Second}, "transient"},
}

// TestBadUpstream runs one node over three misbehaving Sources: each fault
// is reported with the Source, the URI and what was wrong, nothing wrong
// is catalogued, and the rest of each Source keeps syncing.
func TestBadUpstream(t *testing.T) {
	bits := startSource(t, sim.Config{Resources: 40, Seed: 21})
	docs := startSource(t, sim.Config{Resources: 30, Seed: 22})
	slow := startSource(t, sim.Config{Resources: 5, Seed: 23})
	for _, b := range badBitstreams {
		setFault(t, bits, b.path, b.fault)
	}
	setFault(t, bits, sim.PathResourceList, sim.Fault{ExtraLoc: sim.ForeignLoc})
	setFault(t, bits, "/changelist-*.xml", sim.Fault{ExtraLoc: sim.PrivateLoc})
	// The slow Source's Capability List never answers while the test
	// watches; were a pass not bounded by the response header timeout, it
	// would wait for the release a minute later and succeed.
	unanswered := make(chan struct{})
	setFault(t, slow, sim.PathCapabilities, sim.Fault{Hold: unanswered})
	watchdog := time.AfterFunc(time.Minute, func() { close(unanswered) })
	t.Cleanup(func() {
		if watchdog.Stop() {
			close(unanswered)
		}
	})

	cfg := testConfig(t.TempDir(), sourceConfig("bits", bits), sourceConfig("docs", docs), sourceConfig("slow", slow))
	cfg.Upstream.ResponseHeaderTimeout = 300 * time.Millisecond
	// Each fault's dead letter stays, whatever the second pass brings back
	// or drops (TestDeadLettersComeBackAfterAnOutage covers that).
	cfg.Harvest.DeadLetterRetries = 0
	logs := &logBuffer{}
	n := startNode(t, cfg, logs.logger())

	t.Run("bitstreams", func(t *testing.T) {
		mustSync(t, n, "bits")
		// Settled first, so that the mutation's changes are a second pass.
		waitSettled(t, n, 60*time.Second)
		bits.Mutate(10)
		mustSync(t, n, "bits")
		waitSettled(t, n, 60*time.Second)
		dead := map[string]queue.DeadLetter{}
		for _, d := range deadLetters(t, n) {
			dead[strings.TrimPrefix(d.Evidence["uri"], bits.URL)] = d
		}
		snap := bits.Snapshot()
		for _, b := range badBitstreams {
			d, ok := dead[b.path]
			switch {
			case !ok:
				t.Errorf("%s (%+v): no dead letter", b.path, b.fault)
			case !strings.HasPrefix(d.Reason, b.reason) || d.Subject != queue.ChangeSubject("bits"):
				t.Errorf("%s: dead letter on %s says %q, want %s", b.path, d.Subject, d.Reason, b.reason)
			}
			if len(logs.records(map[string]string{"msg": "dead-lettered", "source": "bits", "uri": bits.URL + b.path})) == 0 {
				t.Errorf("%s: no error logged naming the Source and the URI", b.path)
			}
			// Never held: no row, or the tombstone of a deletion by the
			// Source's mutation (no copy, sequence 0).
			if r, err := n.Catalog().Resource(context.Background(), "bits", bits.URL+b.path); !errors.Is(err, catalog.ErrNotFound) && (err != nil || !r.Deleted || r.Seq != 0) {
				t.Errorf("%s is catalogued (%+v, %v)", b.path, r, err)
			}
			delete(snap, bits.URL+b.path)
		}
		if len(dead) != len(badBitstreams) {
			t.Errorf("%d dead letters, want %d", len(dead), len(badBitstreams))
		}
		checkHeld(t, n, "bits", snap)
		for _, loc := range []string{sim.ForeignLoc, sim.PrivateLoc} {
			// Refused entries are summarised once per document, with a few
			// examples of each kind.
			logged := false
			for _, r := range logs.records(map[string]string{"msg": "entries refused", "source": "bits"}) {
				if b, _ := json.Marshal(r); strings.Contains(string(b), loc) {
					logged = true
				}
			}
			if !logged {
				t.Errorf("no refusal summary names the entry %s", loc)
			}
			if _, err := n.Catalog().Resource(context.Background(), "bits", loc); !errors.Is(err, catalog.ErrNotFound) {
				t.Errorf("%s is catalogued (%v)", loc, err)
			}
		}
	})

	t.Run("documents", func(t *testing.T) {
		for _, status := range []int{http.StatusNotFound, http.StatusInternalServerError} {
			setFault(t, docs, sim.PathResourceList, sim.Fault{Status: status})
			failSync(t, n, "docs", docs.URL+sim.PathResourceList)
		}
		docs.ClearFaults()
		mustSync(t, n, "docs")
		waitSettled(t, n, 30*time.Second)
		checkMirror(t, n, "docs", docs)
		before := docs.Snapshot()

		docs.Mutate(10)
		setFault(t, docs, "/changelist-*.xml", sim.Fault{Status: http.StatusBadGateway})
		failSync(t, n, "docs", docs.URL+"/changelist-")
		waitSettled(t, n, 30*time.Second)
		checkHeld(t, n, "docs", before)

		// A Change List out of order (Hyrax lists newest first) is read
		// sorted by change time.
		setFault(t, docs, "/changelist-*.xml", sim.Fault{NonChronological: true})
		mustSync(t, n, "docs")
		waitSettled(t, n, 30*time.Second)
		checkMirror(t, n, "docs", docs)
	})

	t.Run("slow", func(t *testing.T) {
		failSync(t, n, "slow", slow.URL+sim.PathCapabilities)
		slow.ClearFaults()
		mustSync(t, n, "slow")
		waitSettled(t, n, 30*time.Second)
		checkMirror(t, n, "slow", slow)
	})
	checkBlobs(t, n)
}

func setFault(t testing.TB, src *sim.Server, pattern string, f sim.Fault) {
	t.Helper()
	if err := src.SetFault(pattern, f); err != nil {
		t.Fatal(err)
	}
}

// failSync runs a pass that must fail, with an error naming the Source and
// containing what.
func failSync(t testing.TB, n *Node, name, what string) {
	t.Helper()
	code, body := syncSource(t, n, name)
	if code == http.StatusOK {
		t.Fatalf("pass over %s succeeded, want an error about %s", name, what)
	}
	var answer struct{ Error string }
	if json.Unmarshal([]byte(body), &answer) == nil && answer.Error != "" {
		body = answer.Error
	}
	if !strings.Contains(body, "source "+name) && !strings.Contains(body, `source "`+name+`"`) || !strings.Contains(body, what) {
		t.Fatalf("pass over %s failed with %q, want the Source named and %q", name, body, what)
	}
}

// checkHeld checks that the catalog holds exactly the live resources of
// want (a Source snapshot) for the collection.
func checkHeld(t testing.TB, n *Node, collection string, want map[string]sim.Item) {
	t.Helper()
	live := 0
	for uri, it := range want {
		if it.Deleted {
			continue
		}
		live++
		r, err := n.Catalog().Resource(context.Background(), collection, uri)
		if err != nil || r.Deleted || r.SHA256 != it.SHA256 || r.Length != it.Length {
			t.Fatalf("%s: catalog has %+v (%v), want sha256 %s length %d", uri, r, err, it.SHA256, it.Length)
		}
	}
	held, _, err := n.Catalog().CountResources(context.Background(), collection)
	if err != nil {
		t.Fatal(err)
	}
	if held != live {
		n.Catalog().Resources(context.Background(), collection, "", 0, func(r *catalog.Resource) error {
			if it, ok := want[r.URI]; !ok || it.Deleted {
				t.Errorf("%s is held (as %s), want it deleted or never held", r.URI, r.SHA256)
			}
			return nil
		})
		t.Fatalf("catalog holds %d resources of %s, want %d", held, collection, live)
	}
}
