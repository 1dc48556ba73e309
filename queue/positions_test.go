package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// A Source's position is fenced by its claim: once another node claims it,
// the earlier holder's writes fail and change nothing, and the new holder
// resumes from the last position the earlier one stored.
func TestPositionClaimFencesTheEarlierHolder(t *testing.T) {
	ctx := ctxTimeout(t, 30*time.Second)
	srv := queuetest.Start(t)
	a, b := peer(t, srv, "node-a"), peer(t, srv, "node-b")

	pa, err := a.ClaimPosition(ctx, "example.org repo")
	if err != nil {
		t.Fatal(err)
	}
	if !pa.Fresh() {
		t.Fatal("the first claim of a Source finds a position")
	}
	if err := pa.SetMany(ctx, map[string]string{"changes": "2024-05-01T00:00:00Z", "validators": `{"x":{}}`}); err != nil {
		t.Fatal(err)
	}
	if err := pa.Set(ctx, "changes", "2024-05-02T00:00:00Z"); err != nil {
		t.Fatal(err)
	}

	pb, err := b.ClaimPosition(ctx, "example.org repo")
	if err != nil {
		t.Fatal(err)
	}
	if pb.Fresh() || pb.Cursor("changes") != "2024-05-02T00:00:00Z" || pb.Cursor("validators") != `{"x":{}}` {
		t.Fatalf("b resumes from %v, want a's last position", pb.Cursors())
	}
	if err := pa.Set(ctx, "changes", "2024-05-09T00:00:00Z"); !errors.Is(err, queue.ErrFenced) {
		t.Fatalf("a moves a cursor after b claimed the position: got %v, want ErrFenced", err)
	}
	if got := pa.Cursor("changes"); got != "2024-05-02T00:00:00Z" {
		t.Fatalf("a's refused write still changed its view to %s", got)
	}
	if err := pb.Set(ctx, "changes", "2024-05-03T00:00:00Z"); err != nil {
		t.Fatalf("b moves the cursor: %v", err)
	}
	if err := pb.Set(ctx, "validators", ""); err != nil {
		t.Fatal(err)
	}
	got, err := srv.ReadPosition(ctx, "example.org repo")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["changes"] != "2024-05-03T00:00:00Z" {
		t.Fatalf("stored position %v, want only b's changes cursor", got)
	}
}

func TestKVKeyRoundTrip(t *testing.T) {
	for _, name := range []string{"", "plain-name_1", "example.org repo", "source:a/b=c", "ünï"} {
		key := queue.KVKey(name)
		back, err := queue.KVName(key)
		if err != nil || back != name {
			t.Errorf("KVName(KVKey(%q)) = %q, %v", name, back, err)
		}
	}
}
