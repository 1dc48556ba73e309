package websub

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hubEnv is a Hub served on 127.0.0.1 with one topic, on a fake clock.
type hubEnv struct {
	clock  *fakeClock
	store  *MemStore
	outbox *MemOutbox
	hub    *Hub
	srv    *httptest.Server
	topic  string
}

func newHubEnv(t *testing.T, clock *fakeClock, store *MemStore, outbox *MemOutbox) *hubEnv {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &hubEnv{clock: clock, store: store, outbox: outbox, srv: srv, topic: srv.URL + "/coll/change/"}
	h, err := NewHub(context.Background(), HubConfig{URL: srv.URL + "/hub", RetryMin: 10 * time.Second, RetryMax: 40 * time.Second},
		HubOptions{Store: store, Outbox: outbox, Policy: AllowAllCallbacks, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	h.AddTopic(e.topic)
	mux.Handle("/hub", h)
	mux.Handle("/coll/change/", h.TopicHandler(e.topic))
	e.hub = h
	return e
}

// subscribeForm POSTs a subscription request to the hub as a foreign
// subscriber would.
func (e *hubEnv) subscribeForm(t *testing.T, v url.Values) int {
	t.Helper()
	resp, err := http.PostForm(e.hub.URL(), v)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// idle waits until the hub has no verification in flight.
func (e *hubEnv) idle(t *testing.T) {
	t.Helper()
	eventually(t, "verifications to finish", func() bool {
		e.hub.mu.Lock()
		defer e.hub.mu.Unlock()
		return e.hub.pending == 0
	})
}

// notification is what a NotifyFunc was handed.
type notification struct {
	sub     Sub
	from    time.Time
	until   time.Time
	entries []string
}

// recorder is a NotifyFunc that records, failing the first failFirst calls.
type recorder struct {
	mu        sync.Mutex
	got       []notification
	calls     int
	failFirst int
}

func (r *recorder) notify(_ context.Context, sub Sub, h *resourcesync.Header, es []*resourcesync.Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls <= r.failFirst {
		return fmt.Errorf("refusing call %d", r.calls)
	}
	n := notification{sub: sub, from: h.MD.From, until: h.MD.Until}
	for _, e := range es {
		n.entries = append(n.entries, e.Loc)
	}
	r.got = append(r.got, n)
	return nil
}

func (r *recorder) snapshot() (int, []notification) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, append([]notification(nil), r.got...)
}

// newSubscriber serves a Subscriber on 127.0.0.1 under /cb/.
func newSubscriber(t *testing.T, clock Clock, rec *recorder, lease time.Duration) (*Subscriber, *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s, err := NewSubscriber(SubscriberConfig{CallbackBase: srv.URL + "/cb/", Lease: lease, RetryMin: time.Minute, RetryMax: time.Hour},
		SubscriberOptions{Clock: clock}, rec.notify)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	mux.Handle("/cb/", s)
	return s, srv
}

// payload is a change notification for [from, until) with one entry per loc.
func payload(t testing.TB, from, until time.Time, locs ...string) []byte {
	t.Helper()
	var es []*resourcesync.Entry
	for i, l := range locs {
		es = append(es, &resourcesync.Entry{Loc: l, MD: &resourcesync.MD{Change: resourcesync.Updated, DateTime: from.Add(time.Duration(i) * time.Second)}})
	}
	b, err := EncodeNotification(from, until, "http://example.com/capabilitylist.xml", es)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeCallback is a subscriber written by hand: it answers verification
// as answer says and POSTs with the status post returns, recording them.
type fakeCallback struct {
	mu     sync.Mutex
	answer func(q url.Values) (int, string)
	post   func(n int) int
	leases []string
	verifs int
	posts  []*capturedPost
	srv    *httptest.Server
}

type capturedPost struct {
	status int
	body   string
	header http.Header
}

func newFakeCallback(t *testing.T) *fakeCallback {
	f := &fakeCallback{
		answer: func(q url.Values) (int, string) { return 200, q.Get("hub.challenge") },
		post:   func(int) int { return 204 },
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if r.Method == http.MethodGet {
			f.verifs++
			f.leases = append(f.leases, r.URL.Query().Get("hub.lease_seconds"))
			st, body := f.answer(r.URL.Query())
			w.WriteHeader(st)
			io.WriteString(w, body)
			return
		}
		b, _ := io.ReadAll(r.Body)
		st := f.post(len(f.posts) + 1)
		f.posts = append(f.posts, &capturedPost{status: st, body: string(b), header: r.Header.Clone()})
		w.WriteHeader(st)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeCallback) url() string { return f.srv.URL + "/callback?x=1" }

func (f *fakeCallback) postCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.posts)
}

func (f *fakeCallback) capturedPosts() []capturedPost {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []capturedPost
	for _, p := range f.posts {
		out = append(out, *p)
	}
	return out
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func newFormRequest(v url.Values) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/hub", strings.NewReader(v.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

func (f *fakeCallback) verifications() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.verifs
}

func (f *fakeCallback) lease(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leases[i]
}

// subscribe subscribes f to the hub's topic with secret and waits for the
// hub to hold the subscription.
func (f *fakeCallback) subscribe(t *testing.T, e *hubEnv, secret, lease string) Subscription {
	t.Helper()
	v := form("hub.mode", "subscribe", "hub.topic", e.topic, "hub.callback", f.url(), "hub.secret", secret, "hub.lease_seconds", lease)
	if st := e.subscribeForm(t, v); st != http.StatusAccepted {
		t.Fatalf("subscribe: status %d", st)
	}
	eventually(t, "the subscription", func() bool { return len(e.hub.Subscriptions()) == 1 })
	return e.hub.Subscriptions()[0]
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// hmacHex signs body with one of WebSub's other methods.
func hmacHex(method, secret string, body []byte) string {
	var m hash.Hash
	switch method {
	case "sha1":
		m = hmac.New(sha1.New, []byte(secret))
	case "sha384":
		m = hmac.New(sha512.New384, []byte(secret))
	default:
		m = hmac.New(sha512.New, []byte(secret))
	}
	m.Write(body)
	return method + "=" + hex.EncodeToString(m.Sum(nil))
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
