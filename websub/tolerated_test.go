package websub

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestChangeListPayloadAccepted: ResourceSync PuSH (before 2017) posts
// its notifications with capability="changelist". On a subscribed
// callback, signed with the subscription's secret, such a payload is taken
// as a notification, its changes handed on, and counted under
// WarnChangeListPayload; a payload that is no change document at all is
// still refused.
func TestChangeListPayloadAccepted(t *testing.T) {
	_, s, rec, sub := subscribed(t)
	secret := s.secretOf(sub.ID)
	n := payload(t, t0, t0.Add(time.Minute), "http://example.com/res1", "http://example.com/res2")
	asChangeList := bytes.Replace(n, []byte(`capability="change-notification"`), []byte(`capability="changelist"`), 1)
	if bytes.Equal(n, asChangeList) {
		t.Fatal("test payload has no change-notification capability to replace")
	}
	for i := 0; i < 2; i++ {
		if got := postTo(t, sub.Callback, asChangeList, map[string]string{SignatureHeader: Sign(secret, asChangeList)}); got != http.StatusNoContent {
			t.Fatalf("changelist payload %d: status %d, want 204", i, got)
		}
	}
	calls, got := rec.snapshot()
	if calls != 2 || len(got[0].entries) != 2 || got[0].entries[1] != "http://example.com/res2" || !got[0].from.Equal(t0) || !got[0].until.Equal(t0.Add(time.Minute)) {
		t.Fatalf("NotifyFunc got %d calls: %+v", calls, got)
	}
	g, _ := s.Get(sub.ID)
	if g.Tolerated[WarnChangeListPayload] != 2 {
		t.Errorf("tolerated %v, want 2 %s", g.Tolerated, WarnChangeListPayload)
	}

	// A zone-less from is the reader's tolerance, counted the same way.
	zoneless := bytes.Replace(n, []byte(`from="`+resourcesync.FormatTime(t0)+`"`), []byte(`from="`+t0.Format("2006-01-02T15:04:05")+`"`), 1)
	if got := postTo(t, sub.Callback, zoneless, map[string]string{SignatureHeader: Sign(secret, zoneless)}); got != http.StatusNoContent {
		t.Fatalf("zone-less payload: status %d, want 204", got)
	}
	if g, _ := s.Get(sub.ID); g.Tolerated[resourcesync.WarnZonelessTime] != 1 {
		t.Errorf("tolerated %v, want 1 %s", g.Tolerated, resourcesync.WarnZonelessTime)
	}

	// A Resource List is not a notification, even on a subscribed callback.
	rl := bytes.Replace(n, []byte(`capability="change-notification"`), []byte(`capability="resourcelist"`), 1)
	if got := postTo(t, sub.Callback, rl, map[string]string{SignatureHeader: Sign(secret, rl)}); got != http.StatusBadRequest {
		t.Errorf("resourcelist payload: status %d, want 400", got)
	}
	if calls, _ := rec.snapshot(); calls != 3 {
		t.Errorf("NotifyFunc called %d times, want 3", calls)
	}
}
