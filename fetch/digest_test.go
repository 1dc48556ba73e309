package fetch

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
)

// TestDeclaredBase64DigestsAreVerified: a Source built on resync before
// 2016 declares md5 in base64 ("md5:E+0tzxHYD0ohNZG+DFqXrA=="). Its
// bitstreams are verified digest against digest and stored; a base64
// digest of other bytes is still a mismatch; a digest nobody can read is
// ignored (the bitstream is taken on its length), never a mismatch. The
// changes carry the digests as written, as a message queued by an older
// harvester does (the reader now rewrites them in hex).
func TestDeclaredBase64DigestsAreVerified(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 5, MinSize: 100, MaxSize: 5000})
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
		m, s := md5.Sum(body), sha256.Sum256(body)
		switch i {
		case 0, 1:
			c.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: base64.StdEncoding.EncodeToString(m[:])}}
		case 2:
			c.Hash = resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: base64.RawURLEncoding.EncodeToString(s[:])}}
		case 3:
			m[0] ^= 0xff
			c.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: base64.StdEncoding.EncodeToString(m[:])}}
			wrong = c.URI
		case 4:
			c.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: "not-a-digest"}}
		}
	}
	q := startQueue(t)
	store, _ := dirStore(t)
	publishAndRun(t, q, store, srv, changes)

	eventually(t, 30*time.Second, "one dead letter, four events, CHANGES empty", func() bool {
		return len(deadLetters(t, q)) == 1 && len(events(t, q)) == 4 && streamMsgs(t, q, queue.StreamChanges) == 0
	})
	d := deadLetters(t, q)[0]
	if d.Evidence["uri"] != wrong || !strings.HasPrefix(d.Reason, "mismatch") || !strings.Contains(d.Evidence["error"], "md5 mismatch") {
		t.Errorf("dead letter for %s (%q, %q), want an md5 mismatch of %s", d.Evidence["uri"], d.Reason, d.Evidence["error"], wrong)
	}
	snap := srv.Snapshot()
	for _, ev := range events(t, q) {
		if ev.URI == wrong {
			t.Errorf("event published for %s, whose md5 is wrong", ev.URI)
		}
		if it := snap[ev.URI]; ev.SHA256 != it.SHA256 || ev.MD5 != it.MD5 {
			t.Errorf("%s: event has sha-256 %s, md5 %s; the bytes have %s, %s", ev.URI, ev.SHA256, ev.MD5, it.SHA256, it.MD5)
		}
	}
	if got := blobFiles(t, store); len(got) != 4 {
		t.Errorf("store holds %d blobs, want the 4 verified", len(got))
	}
}

// TestUnreadableDigestIsNoEvidence: a held copy is taken for the Source's
// bytes only on a digest that can be read; a declared value nobody can
// read says nothing, so the bitstream is fetched (and verified on its
// length), never skipped as already held.
func TestUnreadableDigestIsNoEvidence(t *testing.T) {
	held := &catalog.Lookup{MD5: "13ed2dcf11d80f4a213591be0c5a97ac", SHA256: strings.Repeat("0", 64), Length: 8}
	for _, c := range []struct {
		hash string
		same bool
	}{
		{"md5:13ed2dcf11d80f4a213591be0c5a97ac", true},
		{"md5:E+0tzxHYD0ohNZG+DFqXrA==", true},
		{"md5:Igtq8HKF0N+Zhy3sfwBwkQ==", false},
		{"md5:not-a-digest", false},
		{"sha-256:not-a-digest", false},
	} {
		// As an older harvester queued them: the values as written.
		alg, val, _ := strings.Cut(c.hash, ":")
		ch := &viaduct.Change{Hash: resourcesync.Hashes{{Alg: alg, Value: val}}}
		if got := sameContent(ch, held); got != c.same {
			t.Errorf("%s: same content %v, want %v", c.hash, got, c.same)
		}
	}
}
