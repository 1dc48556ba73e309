package websub

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// BenchmarkNotification is the Subscriber's cost per notification of 1,000
// entries: signature check, parse and hand-over, without the network.
func BenchmarkNotification(b *testing.B) {
	const n = 1000
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("http://example.com/dataset1/resource/%06d.pdf", i)
	}
	body := payload(b, t0, t0.Add(time.Minute), locs...)
	s, err := NewSubscriber(SubscriberConfig{CallbackBase: "http://viaduct.example/cb/"}, SubscriberOptions{},
		func(context.Context, Sub, *resourcesync.Header, []*resourcesync.Entry) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const id = "bench"
	s.subs[id] = &subEntry{Sub: Sub{ID: id, Topic: "http://example.com/t/", State: Active}, secret: "s3cret"}
	sig := Sign("s3cret", body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/cb/"+id, bytesReader(body))
		r.Header.Set(SignatureHeader, sig)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent {
			b.Fatalf("status %d", w.Code)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkDelivery is the Hub's cost per delivery to one subscriber over
// loopback HTTP: queue, sign, POST, acknowledge.
func BenchmarkDelivery(b *testing.B) {
	body := payload(b, t0, t0.Add(time.Minute), "http://example.com/a", "http://example.com/b")
	got := make(chan struct{}, 1024)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Write([]byte(r.URL.Query().Get("hub.challenge")))
			return
		}
		w.WriteHeader(http.StatusNoContent)
		got <- struct{}{}
	}))
	defer cb.Close()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	h, err := NewHub(context.Background(), HubConfig{URL: srv.URL + "/hub"}, HubOptions{Store: NewMemStore(), Outbox: NewMemOutbox(), Policy: AllowAllCallbacks})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	topic := srv.URL + "/t/"
	h.AddTopic(topic)
	mux.Handle("/hub", h)
	resp, err := http.PostForm(srv.URL+"/hub", form("hub.mode", "subscribe", "hub.topic", topic, "hub.callback", cb.URL+"/cb", "hub.secret", "x"))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	eventually(b, "the subscription", func() bool { return len(h.Subscriptions()) > 0 })
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := h.Publish(context.Background(), topic, body); err != nil {
			b.Fatal(err)
		}
		<-got
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
