package websub

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// subscribed is a Subscriber with one Active subscription to a Hub.
func subscribed(t *testing.T) (*hubEnv, *Subscriber, *recorder, Sub) {
	t.Helper()
	clock := newFakeClock()
	he := newHubEnv(t, clock, NewMemStore(), NewMemOutbox())
	rec := &recorder{}
	s, _ := newSubscriber(t, clock, rec, time.Hour)
	sub, err := s.Subscribe(context.Background(), he.hub.URL(), he.topic)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "verification", func() bool { g, _ := s.Get(sub.ID); return g.State == Active })
	sub, _ = s.Get(sub.ID)
	return he, s, rec, sub
}

func (s *Subscriber) secretOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.subs[id].secret
}

func postTo(t *testing.T, callback string, body []byte, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, callback, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/xml")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestForgedNotifications: everything a hub did not sign, or that is not
// a change notification on the subscribed topic, is refused and never
// reaches the NotifyFunc.
func TestForgedNotifications(t *testing.T) {
	he, s, rec, sub := subscribed(t)
	secret := s.secretOf(sub.ID)
	good := payload(t, t0, t0.Add(time.Minute), "http://example.com/a")
	link := linkHeader(he.topic, he.hub.URL())
	changelist := bytes.Replace(good, []byte(`capability="change-notification"`), []byte(`capability="changelist"`), 1)
	resourceList := bytes.Replace(good, []byte(`capability="change-notification"`), []byte(`capability="resourcelist"`), 1)
	noUntil := payload(t, t0, time.Time{}, "http://example.com/a")
	badEntry := bytes.Replace(good, []byte(`change="updated"`), []byte(`change="updated" length="many"`), 1)
	exOne, err := os.ReadFile("testdata/notification-ex01.xml")
	if err != nil {
		t.Fatal(err)
	}
	capList, err := os.ReadFile("testdata/capabilitylist-ex07.xml")
	if err != nil {
		t.Fatal(err)
	}
	signed := func(b []byte) map[string]string {
		return map[string]string{SignatureHeader: Sign(secret, b), "Link": link}
	}
	cases := []struct {
		name     string
		callback string
		body     []byte
		hdr      map[string]string
		want     int
	}{
		{"no signature", sub.Callback, good, map[string]string{"Link": link}, http.StatusForbidden},
		{"signed with another secret", sub.Callback, good, map[string]string{SignatureHeader: Sign("guess", good), "Link": link}, http.StatusForbidden},
		{"signature of another body", sub.Callback, good, map[string]string{SignatureHeader: Sign(secret, changelist), "Link": link}, http.StatusForbidden},
		{"unknown signature method", sub.Callback, good, map[string]string{SignatureHeader: "md5=00", "Link": link}, http.StatusForbidden},
		{"wrong topic", sub.Callback, good, map[string]string{SignatureHeader: Sign(secret, good), "Link": linkHeader("http://evil.example/t", he.hub.URL())}, http.StatusBadRequest},
		// A payload posted as a Change List is read (tolerated_test.go).
		{"a Resource List", sub.Callback, resourceList, signed(resourceList), http.StatusBadRequest},
		{"a Capability List", sub.Callback, capList, signed(capList), http.StatusBadRequest},
		{"no until", sub.Callback, noUntil, signed(noUntil), http.StatusBadRequest},
		{"a bad entry", sub.Callback, badEntry, signed(badEntry), http.StatusBadRequest},
		{"not XML", sub.Callback, []byte("hello"), signed([]byte("hello")), http.StatusBadRequest},
		{"unknown callback", strings.TrimSuffix(sub.Callback, sub.ID) + "nosuch", good, signed(good), http.StatusGone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := postTo(t, c.callback, c.body, c.hdr); got != c.want {
				t.Fatalf("status %d, want %d", got, c.want)
			}
		})
	}
	if n, _ := rec.snapshot(); n != 0 {
		t.Fatalf("NotifyFunc called %d times for forged notifications", n)
	}
	// The same checks let genuine notifications through, in every
	// signature method WebSub defines.
	for _, sig := range []string{Sign(secret, exOne), hmacHex("sha1", secret, exOne), hmacHex("sha384", secret, exOne), hmacHex("sha512", secret, exOne)} {
		if got := postTo(t, sub.Callback, exOne, map[string]string{SignatureHeader: sig, "Link": link}); got != http.StatusNoContent {
			t.Fatalf("genuine notification (%s): status %d", sig[:6], got)
		}
	}
	if got := postTo(t, sub.Callback, good, map[string]string{SignatureHeader: Sign(secret, good)}); got != http.StatusNoContent {
		t.Fatalf("notification without Link header: status %d", got)
	}
	if n, g := rec.snapshot(); n != 5 || len(g[0].entries) != 2 || g[0].entries[1] != "http://example.com/res2" {
		t.Fatalf("NotifyFunc got %d calls: %+v", n, g)
	}
}

func TestNotificationLimits(t *testing.T) {
	clock := newFakeClock()
	he := newHubEnv(t, clock, NewMemStore(), NewMemOutbox())
	rec := &recorder{}
	mux := http.NewServeMux()
	srv := newServer(t, mux)
	s, err := NewSubscriber(SubscriberConfig{CallbackBase: srv.URL + "/cb/", MaxEntries: 2, MaxBytes: 4096}, SubscriberOptions{Clock: clock}, rec.notify)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mux.Handle("/cb/", s)
	sub, err := s.Subscribe(context.Background(), he.hub.URL(), he.topic)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "verification", func() bool { g, _ := s.Get(sub.ID); return g.State == Active })
	secret := s.secretOf(sub.ID)
	three := payload(t, t0, t0.Add(time.Minute), "http://e/1", "http://e/2", "http://e/3")
	big := payload(t, t0, t0.Add(time.Minute), "http://e/"+strings.Repeat("x", 5000))
	for _, b := range [][]byte{three, big} {
		if got := postTo(t, sub.Callback, b, map[string]string{SignatureHeader: Sign(secret, b)}); got != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413", got)
		}
	}
	if n, _ := rec.snapshot(); n != 0 {
		t.Fatal("oversized notification handed on")
	}
}

// TestVerificationAnswers: the Subscriber echoes the challenge only for
// what it asked for.
func TestVerificationAnswers(t *testing.T) {
	he, s, _, sub := subscribed(t)
	base := strings.TrimSuffix(sub.Callback, sub.ID)
	get := func(cb string, kv ...string) (int, string) {
		u, _ := url.Parse(cb)
		u.RawQuery = form(kv...).Encode()
		resp, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	cases := []struct {
		name string
		cb   string
		kv   []string
	}{
		{"unknown subscription", base + "nosuch", []string{"hub.mode", "subscribe", "hub.topic", he.topic, "hub.challenge", "c", "hub.lease_seconds", "300"}},
		{"other topic", sub.Callback, []string{"hub.mode", "subscribe", "hub.topic", "http://other/", "hub.challenge", "c", "hub.lease_seconds", "300"}},
		{"unsubscribe not asked for", sub.Callback, []string{"hub.mode", "unsubscribe", "hub.topic", he.topic, "hub.challenge", "c"}},
		{"no lease", sub.Callback, []string{"hub.mode", "subscribe", "hub.topic", he.topic, "hub.challenge", "c"}},
		{"no challenge", sub.Callback, []string{"hub.mode", "subscribe", "hub.topic", he.topic, "hub.lease_seconds", "300"}},
		{"other mode", sub.Callback, []string{"hub.mode", "publish", "hub.topic", he.topic, "hub.challenge", "c"}},
	}
	for _, c := range cases {
		if st, body := get(c.cb, c.kv...); st != http.StatusNotFound || body == "c" {
			t.Errorf("%s: %d %q, want 404", c.name, st, body)
		}
	}
	if g, _ := s.Get(sub.ID); g.State != Active || g.Lease != time.Hour {
		t.Fatalf("subscription changed by refused verifications: %+v", g)
	}
	if st, body := get(sub.Callback, "hub.mode", "subscribe", "hub.topic", he.topic, "hub.challenge", "c0cc4630-5116", "hub.lease_seconds", "2400"); st != 200 || body != "c0cc4630-5116" {
		t.Fatalf("renewal verification: %d %q", st, body)
	}
	if g, _ := s.Get(sub.ID); g.Lease != 2400*time.Second {
		t.Fatalf("granted lease not recorded: %+v", g)
	}
}

// TestSubscribeRefused: a hub that refuses the request leaves nothing
// behind.
func TestSubscribeRefused(t *testing.T) {
	he, s, _, _ := subscribed(t)
	if _, err := s.Subscribe(context.Background(), he.hub.URL(), he.srv.URL+"/unknown/"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v, want a 404", err)
	}
	s.mu.Lock()
	n := len(s.subs)
	s.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d subscriptions, want 1", n)
	}
}
