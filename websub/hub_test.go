package websub

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestHubRefusesBadRequests(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	cb := newFakeCallback(t)
	ok := func(kv ...string) url.Values {
		v := form("hub.mode", "subscribe", "hub.topic", he.topic, "hub.callback", cb.url())
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				v.Del(kv[i])
			} else {
				v.Set(kv[i], kv[i+1])
			}
		}
		return v
	}
	cases := []struct {
		name string
		form url.Values
		want int
	}{
		{"unknown topic", ok("hub.topic", he.srv.URL+"/other/"), http.StatusNotFound},
		{"no topic", ok("hub.topic", ""), http.StatusNotFound},
		{"bad mode", ok("hub.mode", "publish"), http.StatusBadRequest},
		{"no callback", ok("hub.callback", ""), http.StatusBadRequest},
		{"ftp callback", ok("hub.callback", "ftp://example.com/cb"), http.StatusBadRequest},
		{"relative callback", ok("hub.callback", "/cb"), http.StatusBadRequest},
		{"secret of 200 bytes", ok("hub.secret", strings.Repeat("s", 200)), http.StatusBadRequest},
		{"negative lease", ok("hub.lease_seconds", "-5"), http.StatusBadRequest},
		{"lease not a number", ok("hub.lease_seconds", "1d"), http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := he.subscribeForm(t, c.form); got != c.want {
				t.Fatalf("status %d, want %d", got, c.want)
			}
		})
	}
	t.Run("not a form", func(t *testing.T) {
		resp, err := http.Post(he.hub.URL(), "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	t.Run("GET", func(t *testing.T) {
		resp, err := http.Get(he.hub.URL())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	if n := cb.verifications(); n != 0 || len(he.hub.Subscriptions()) != 0 {
		t.Fatalf("a refused request was verified (%d) or kept", n)
	}
}

func TestHubDefaultPolicyRefusesLoopback(t *testing.T) {
	store, outbox := NewMemStore(), NewMemOutbox()
	h, err := NewHub(context.Background(), HubConfig{URL: "http://hub.example.org/hub"}, HubOptions{Store: store, Outbox: outbox})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.AddTopic("http://example.org/t/")
	for _, cb := range []string{"http://127.0.0.1:9/cb", "http://localhost/cb", "http://[::1]/cb", "http://10.1.2.3/cb", "http://169.254.169.254/latest", "http://0.0.0.0/"} {
		req := newFormRequest(form("hub.mode", "subscribe", "hub.topic", "http://example.org/t/", "hub.callback", cb))
		rec := serve(h, req)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("callback %s: status %d, want 400", cb, rec.Code)
		}
	}
	if err := DefaultCallbackPolicy(mustURL(t, "https://destination.example.net/cb")); err != nil {
		t.Errorf("public name refused: %v", err)
	}
}

func TestVerificationFailure(t *testing.T) {
	cases := []struct {
		name   string
		answer func(q url.Values) (int, string)
	}{
		{"wrong challenge", func(url.Values) (int, string) { return 200, "nope" }},
		{"challenge with a newline", func(q url.Values) (int, string) { return 200, q.Get("hub.challenge") + "\n" }},
		{"challenge with 404", func(q url.Values) (int, string) { return 404, q.Get("hub.challenge") }},
		{"challenge with 500", func(q url.Values) (int, string) { return 500, q.Get("hub.challenge") }},
		{"empty body", func(url.Values) (int, string) { return 200, "" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
			cb := newFakeCallback(t)
			cb.answer = c.answer
			if st := he.subscribeForm(t, form("hub.mode", "subscribe", "hub.topic", he.topic, "hub.callback", cb.url())); st != http.StatusAccepted {
				t.Fatalf("status %d, want 202", st)
			}
			eventually(t, "the verification GET", func() bool { return cb.verifications() == 1 })
			he.idle(t)
			if l := he.hub.Subscriptions(); len(l) != 0 {
				t.Fatalf("unverified subscription kept: %+v", l)
			}
			if l, _ := he.store.List(context.Background()); len(l) != 0 {
				t.Fatalf("unverified subscription stored: %+v", l)
			}
			if err := he.hub.Publish(context.Background(), he.topic, payload(t, t0, t0.Add(time.Minute), "http://example.com/a")); err != nil {
				t.Fatal(err)
			}
			if cb.postCount() != 0 {
				t.Fatal("delivered to an unverified callback")
			}
		})
	}
}

func TestLeaseClamping(t *testing.T) {
	cases := []struct{ asked, granted string }{
		{"", "864000"},
		{"0", "864000"},
		{"1", "300"},
		{"299", "300"},
		{"3600", "3600"},
		{"2678400", "2678400"},
		{"2678401", "2678400"},
		{"99999999999999", "2678400"},
	}
	for _, c := range cases {
		t.Run("asked "+c.asked, func(t *testing.T) {
			he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
			cb := newFakeCallback(t)
			f := form("hub.mode", "subscribe", "hub.topic", he.topic, "hub.callback", cb.url())
			if c.asked != "" {
				f.Set("hub.lease_seconds", c.asked)
			}
			if st := he.subscribeForm(t, f); st != http.StatusAccepted {
				t.Fatalf("status %d", st)
			}
			eventually(t, "the subscription", func() bool { return len(he.hub.Subscriptions()) == 1 })
			if l := cb.lease(0); l != c.granted {
				t.Fatalf("verification offered %s s, want %s", l, c.granted)
			}
			s := he.hub.Subscriptions()[0]
			if want := he.clock.Now().Add(time.Duration(s.Lease) * time.Second); s.Expires != want || formatInt(s.Lease) != c.granted {
				t.Fatalf("kept lease %d until %v", s.Lease, s.Expires)
			}
		})
	}
}

func TestTopicHandler(t *testing.T) {
	he := newHubEnv(t, newFakeClock(), NewMemStore(), NewMemOutbox())
	for _, m := range []string{http.MethodHead, http.MethodGet} {
		req, _ := http.NewRequest(m, he.topic, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		self, hub := selfAndHub(resp.Header.Values("Link"))
		if resp.StatusCode != 200 || self != he.topic || hub != he.hub.URL() ||
			resp.Header.Get("Content-Type") != "application/xml" || resp.Header.Get("Content-Length") != "0" {
			t.Fatalf("%s: %d, self %q, hub %q, headers %v", m, resp.StatusCode, self, hub, resp.Header)
		}
	}
	resp, err := http.Post(he.topic, "application/xml", strings.NewReader("<x/>"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST on topic: %d", resp.StatusCode)
	}
}

func TestHubSubscriptionCap(t *testing.T) {
	mux := http.NewServeMux()
	srv := newServer(t, mux)
	h, err := NewHub(context.Background(), HubConfig{URL: srv.URL + "/hub", MaxSubscriptions: 1},
		HubOptions{Store: NewMemStore(), Outbox: NewMemOutbox(), Policy: AllowAllCallbacks, Clock: newFakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	topic := srv.URL + "/t/"
	h.AddTopic(topic)
	mux.Handle("/hub", h)
	he := &hubEnv{hub: h, topic: topic, srv: srv}
	one, two := newFakeCallback(t), newFakeCallback(t)
	one.subscribe(t, he, "", "300")
	if st := he.subscribeForm(t, form("hub.mode", "subscribe", "hub.topic", topic, "hub.callback", two.url())); st != http.StatusServiceUnavailable {
		t.Fatalf("subscription past the cap: %d, want 503", st)
	}
	// Renewing the one held is still possible.
	if st := he.subscribeForm(t, form("hub.mode", "subscribe", "hub.topic", topic, "hub.callback", one.url())); st != http.StatusAccepted {
		t.Fatalf("renewal at the cap: %d, want 202", st)
	}
}

func TestHubConfigErrors(t *testing.T) {
	opts := HubOptions{Store: NewMemStore(), Outbox: NewMemOutbox()}
	for _, c := range []HubConfig{
		{URL: "/hub"},
		{URL: "http://h/hub", MinLease: time.Hour, MaxLease: time.Minute},
		{URL: "http://h/hub", DefaultLease: time.Second},
		{URL: "http://h/hub", RetryMin: time.Hour, RetryMax: time.Second},
	} {
		if h, err := NewHub(context.Background(), c, opts); err == nil {
			h.Close()
			t.Errorf("%+v accepted", c)
		}
	}
}
