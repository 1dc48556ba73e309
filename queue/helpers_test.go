package queue_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// eventually waits for cond with the project's one polling helper.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, d, what, cond)
}

// changesLeft waits until CHANGES holds at most atMost messages and
// returns how many it holds then and the sequence of the first. The
// fetch consumer takes one connection's acks in order, so a message
// acked before the one whose leaving ends the wait has left by then too:
// what is still there was not acked.
func changesLeft(t testing.TB, q *queue.Queue, atMost uint64) (msgs, first uint64) {
	t.Helper()
	ctx := context.Background()
	s, err := q.JetStream().Stream(ctx, queue.StreamChanges)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, fmt.Sprintf("CHANGES to hold %d messages or fewer", atMost), func() bool {
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		msgs, first = info.State.Msgs, info.State.FirstSeq
		return msgs <= atMost
	})
	return msgs, first
}

// testChange is the i-th change of a source with dots and spaces in its
// name, as operators write them.
func testChange(i int) *viaduct.Change {
	return &viaduct.Change{
		Source:     "example.org repo",
		Collection: "theses",
		URI:        fmt.Sprintf("http://example.org/res/%d", i),
		Op:         "updated",
		Time:       time.Date(2024, 5, 1, 12, 0, i, 0, time.UTC),
		Hash:       resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: fmt.Sprintf("%064x", i)}},
	}
}

func testEvent(i int) *viaduct.Event {
	c := testChange(i)
	return &viaduct.Event{
		Source: c.Source, Collection: "theses.2024", URI: c.URI, Op: c.Op,
		SHA256: fmt.Sprintf("%064x", i), Length: int64(i), Upstream: *c,
	}
}

// streamMsgs is how many messages stream holds now.
func streamMsgs(t testing.TB, q *queue.Queue, stream string) uint64 {
	t.Helper()
	return testutil.StreamMsgs(t, q.JetStream(), stream)
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// next takes the next change or fails the test.
func next(t *testing.T, s *queue.ChangeStream) *queue.ChangeMsg {
	t.Helper()
	m, err := s.Next(ctxTimeout(t, 10*time.Second))
	if err != nil {
		t.Fatalf("next change: %v", err)
	}
	return m
}

// eventsOnDisk is what the message blocks of EVENTS take on disk in the
// embedded server's directory dir, and how many there are.
func eventsOnDisk(t testing.TB, dir string) (bytes int64, blocks int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".blk") || !strings.Contains(p, filepath.Join("streams", queue.StreamEvents)) {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		bytes += info.Size()
		blocks++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bytes, blocks
}
