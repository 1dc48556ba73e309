package fetch

import (
	"crypto/sha1"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestDeclaredSHA1IsVerified: a Source that declares only sha-1 digests
// has them checked (the blob writers compute sha-1 only when asked), on
// bitstreams large enough for the md5 lanes: the right ones are stored,
// the wrong one is dead-lettered as a mismatch and not stored.
func TestDeclaredSHA1IsVerified(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 3, MinSize: resourcesync.LanesFrom + 1000, MaxSize: resourcesync.LanesFrom + 90000})
	changes := simChanges(t, srv)
	wrong := ""
	for i := range changes {
		c := &changes[i]
		resp, err := http.Get(c.URI)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum(body)
		digest := hex.EncodeToString(sum[:])
		if i == 1 {
			digest = strings.Repeat("0", len(digest))
			wrong = c.URI
		}
		c.Hash = resourcesync.Hashes{{Alg: resourcesync.SHA1, Value: digest}}
	}
	q := startQueue(t)
	store, _ := dirStore(t)
	publishAndRun(t, q, store, srv, changes)

	eventually(t, 30*time.Second, "one dead letter, two events, CHANGES empty", func() bool {
		return len(deadLetters(t, q)) == 1 && len(events(t, q)) == 2 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	d := deadLetters(t, q)[0]
	if d.Evidence["uri"] != wrong || !strings.HasPrefix(d.Reason, "mismatch") || !strings.Contains(d.Evidence["error"], "sha-1 mismatch") {
		t.Errorf("dead letter for %s (%q, %q), want a sha-1 mismatch of %s", d.Evidence["uri"], d.Reason, d.Evidence["error"], wrong)
	}
	snap := srv.Snapshot()
	for _, ev := range events(t, q) {
		if ev.URI == wrong {
			t.Errorf("event published for %s, whose sha-1 is wrong", ev.URI)
		}
		if it := snap[ev.URI]; ev.SHA256 != it.SHA256 || ev.MD5 != it.MD5 {
			t.Errorf("%s: event has sha-256 %s, md5 %s; the bytes have %s, %s", ev.URI, ev.SHA256, ev.MD5, it.SHA256, it.MD5)
		}
	}
	if got := blobFiles(t, store); len(got) != 2 {
		t.Errorf("store holds %d blobs, want the 2 verified", len(got))
	}
}
