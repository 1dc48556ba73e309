package notify

import (
	"context"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/republish"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
)

// TestNotifierWokenPublishesAtOnce checks that a notifier told the
// catalog changed publishes then, not at the end of its window: with a
// window of a minute, a change applied and signalled is notified at once.
func TestNotifierWokenPublishesAtOnce(t *testing.T) {
	cfg := republish.Config{Notify: republish.NotifyConfig{Enabled: true, Window: time.Minute}}
	f := newSQLiteFixture(t, cfg)
	pub := &recorder{}
	nf, err := NewNotifier(f.srv, f.cat, pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wake := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { done <- nf.RunWoken(ctx, wake) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	// The notifier flushes once as it starts, and a collection without a
	// cursor starts at its last change: changes applied before that flush
	// are history, never notified. A loaded machine may delay the flush
	// past round 1's changes, so the rounds begin once the collection's
	// cursor is saved.
	testutil.Eventually(t, 20*time.Second, "the notifier's start", func() bool {
		_, err := f.cat.Value(ctx, cursorKey("alpha"))
		return err == nil
	})
	// notified counts the changes published so far: a round's changes go
	// out with its signal, or with a flush already under way.
	notified := func() int {
		pub.mu.Lock()
		defer pub.mu.Unlock()
		n := 0
		for _, p := range pub.payloads {
			_, es := readNotification(t, p)
			n += len(es)
		}
		return n
	}
	for round := 1; round <= 3; round++ {
		applyN(t, f, round*10, 2)
		wake <- struct{}{}
		// Far less than the window: only the signal can have published it.
		testutil.Eventually(t, 20*time.Second, "the notification of a signalled change", func() bool { return notified() == 2*round })
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	for i, p := range pub.payloads {
		if _, es := readNotification(t, p); len(es) == 0 || len(es) > 2 {
			t.Fatalf("payload %d holds %d changes, want those applied before its signal, at most 2", i, len(es))
		}
	}
}
