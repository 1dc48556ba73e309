package websub

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestExternalHub: publishing to a third-party hub is the spec's Example
// 2: a POST of the payload with Content-Type application/xml and the self
// and hub links.
func TestExternalHub(t *testing.T) {
	var mu sync.Mutex
	var got *http.Request
	var body []byte
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got, body = r, nil
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	hub := &ExternalHub{URL: srv.URL + "/websub/"}
	p := payload(t, t0, t0.Add(time.Minute), "http://example.com/a")
	topic := "http://example.com/dataset1/change/"
	if err := hub.Publish(context.Background(), topic, p); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	self, h := selfAndHub(got.Header.Values("Link"))
	if got.Method != http.MethodPost || got.URL.Path != "/websub/" || got.Header.Get("Content-Type") != "application/xml" ||
		self != topic || h != hub.URL || string(body) != string(p) {
		t.Fatalf("hub got %s %s, self %q, hub %q, headers %v", got.Method, got.URL, self, h, got.Header)
	}
	status = http.StatusInternalServerError
	mu.Unlock()
	if err := hub.Publish(context.Background(), topic, p); err == nil {
		t.Fatal("a 500 from the hub was not an error")
	}
}

func TestEncodeNotificationReadsBack(t *testing.T) {
	p := payload(t, t0, t0.Add(time.Minute), "http://example.com/a", "http://example.com/b")
	s := &Subscriber{cfg: SubscriberConfig{MaxEntries: 10, MaxBytes: 1 << 20}}
	h, es, _, err := s.parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind() != resourcesync.KindChangeNotification || !h.MD.From.Equal(t0) || !h.MD.Until.Equal(t0.Add(time.Minute)) ||
		h.Link("up") == nil || len(es) != 2 || es[1].Loc != "http://example.com/b" {
		t.Fatalf("read back %+v, %d entries", h, len(es))
	}
}

func TestPublishUnknownTopic(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	if err := he.hub.Publish(context.Background(), "http://nowhere/", []byte("x")); err == nil {
		t.Fatal("published on an unknown topic")
	}
}

func TestSignature(t *testing.T) {
	body := []byte("<urlset/>")
	sig := Sign("k", body)
	if len(sig) != len("sha256=")+64 || VerifySignature("k", body, sig) != nil {
		t.Fatalf("Sign gave %q", sig)
	}
	for _, bad := range []string{"", "sha256", "sha256=zz", "sha256=" + sig[7:len(sig)-2], "md5=" + sig[7:]} {
		if VerifySignature("k", body, bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if VerifySignature("k", body, "SHA256="+sig[7:]) != nil {
		t.Error("method name is case-insensitive")
	}
}
