package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/republish"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/websub"
)

// recorder is a websub.Publisher that keeps what it is given.
type recorder struct {
	mu       sync.Mutex
	payloads [][]byte
	fail     error
}

func (r *recorder) Publish(_ context.Context, _ string, p []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.payloads = append(r.payloads, bytes.Clone(p))
	return nil
}

func readNotification(t *testing.T, p []byte) (*resourcesync.Header, []*resourcesync.Entry) {
	t.Helper()
	r, err := resourcesync.NewReader(bytes.NewReader(p), resourcesync.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var es []*resourcesync.Entry
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		es = append(es, e)
	}
	return r.Header(), es
}

func applyN(t *testing.T, f *sqliteFixture, from, n int) {
	for i := from; i < from+n; i++ {
		uri := fmt.Sprintf("http://origin.example.org/r/%d", i)
		f.apply(t, base.Add(time.Duration(i)*time.Second), &viaduct.Event{Source: "s", Collection: "alpha", URI: uri, Op: resourcesync.Created,
			Type: "text/plain", Upstream: viaduct.Change{Source: "s", Collection: "alpha", URI: uri, Op: resourcesync.Created, Time: base}}, fmt.Appendf(nil, "body %d", i))
	}
}

// TestNotifierSplitsAndResumes checks payload splitting at MaxEntries,
// consecutive intervals, and that a pending interval left by a crash is
// published again byte for byte before anything new.
func TestNotifierSplitsAndResumes(t *testing.T) {
	cfg := republish.Config{Notify: republish.NotifyConfig{Enabled: true, MaxEntries: 10}}
	f := newSQLiteFixture(t, cfg)
	ctx := context.Background()
	pub := &recorder{}
	nf, err := NewNotifier(f.srv, f.cat, pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := nf.Flush(ctx); err != nil { // no changes yet: the cursor starts at zero
		t.Fatal(err)
	}
	applyN(t, f, 0, 25)
	if err := nf.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(pub.payloads) != 3 {
		t.Fatalf("%d payloads for 25 changes at 10 each, want 3", len(pub.payloads))
	}
	var prev time.Time
	total := 0
	for i, p := range pub.payloads {
		h, es := readNotification(t, p)
		if h.MD.Capability != resourcesync.CapChangeNotification || (i > 0 && !h.MD.From.Equal(prev)) {
			t.Fatalf("payload %d: capability %q from %s, previous until %s", i, h.MD.Capability, h.MD.From, prev)
		}
		prev = h.MD.Until
		total += len(es)
		if last := es[len(es)-1]; !last.MD.DateTime.Equal(h.MD.Until) {
			t.Fatalf("payload %d: until %s is not its last change %s", i, h.MD.Until, last.MD.DateTime)
		}
	}
	if total != 25 {
		t.Fatalf("%d entries notified, want 25", total)
	}

	// A crash after recording the pending interval and before publishing:
	// the next Flush publishes that interval again, identically.
	last := pub.payloads[2]
	h, _ := readNotification(t, pub.payloads[1])
	b, _ := json.Marshal(cursor{Until: h.MD.Until, Pending: prev})
	if err := f.cat.SetValue(ctx, cursorKey("alpha"), b); err != nil {
		t.Fatal(err)
	}
	applyN(t, f, 25, 3)
	pub.fail = fmt.Errorf("hub down")
	if err := nf.Flush(ctx); err == nil {
		t.Fatal("a failed publication was not reported")
	}
	pub.fail = nil
	if err := nf.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(pub.payloads) != 5 || !bytes.Equal(pub.payloads[3], last) {
		t.Fatalf("%d payloads; the pending one republished identically: %v", len(pub.payloads), len(pub.payloads) > 3 && bytes.Equal(pub.payloads[3], last))
	}
	if h, es := readNotification(t, pub.payloads[4]); !h.MD.From.Equal(prev) || len(es) != 3 {
		t.Fatalf("after recovery: from %s (want %s), %d entries (want 3)", h.MD.From, prev, len(es))
	}
}

func TestSubscriptionStore(t *testing.T) {
	f := newSQLiteFixture(t, republish.Config{})
	ctx := context.Background()
	st := NewSubscriptionStore(f.cat)
	a := websub.Subscription{Topic: "http://m/t", Callback: "http://d/a", Secret: "x", Lease: 300, Expires: base}
	b := websub.Subscription{Topic: "http://m/t", Callback: "http://d/b", Lease: 600, Expires: base}
	for _, s := range []websub.Subscription{b, a, a} {
		if _, err := st.Put(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	list, err := NewSubscriptionStore(f.cat).List(ctx)
	if err != nil || len(list) != 2 || list[0].Callback != a.Callback || list[0].Secret != "x" || !list[0].Expires.Equal(base) {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := st.Delete(ctx, a.ID()); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.List(ctx); len(list) != 1 || list[0].Callback != b.Callback {
		t.Fatalf("after delete: %+v", list)
	}
}
