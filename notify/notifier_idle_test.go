package notify

import (
	"context"
	"testing"

	"github.com/viaduct-mirror/viaduct/republish"
)

// TestNotifierWithoutSubscribers: while a topic has no subscriber no
// payload is built, and the cursor follows the collection's last change;
// once one subscribes, it is notified of what changes from then on, in
// payloads that continue from there.
func TestNotifierWithoutSubscribers(t *testing.T) {
	f := newSQLiteFixture(t, republish.Config{Notify: republish.NotifyConfig{Enabled: true, MaxEntries: 100}})
	ctx := context.Background()
	pub := &recorder{}
	nf, err := NewNotifier(f.srv, f.cat, pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	subscribed := false
	nf.Subscribed = func(topic string) bool { return subscribed && topic == f.srv.TopicURL("alpha") }
	if err := nf.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	applyN(t, f, 0, 5)
	if err := nf.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(pub.payloads) != 0 {
		t.Fatalf("%d payloads published with no subscriber, want none", len(pub.payloads))
	}
	st, err := f.srv.LastChange(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	subscribed = true
	applyN(t, f, 5, 3)
	if err := nf.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(pub.payloads) != 1 {
		t.Fatalf("%d payloads after a subscription and 3 changes, want 1", len(pub.payloads))
	}
	h, es := readNotification(t, pub.payloads[0])
	if len(es) != 3 || !h.MD.From.Equal(st) {
		t.Errorf("payload of %d entries from %v, want the 3 changes since %v", len(es), h.MD.From, st)
	}
}
