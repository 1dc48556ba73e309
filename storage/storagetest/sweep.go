package storagetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// slack is how much earlier than a moment a collection's since is taken:
// S3 keeps LastModified to the second.
const slack = 2 * time.Second

// nextSecond waits for the next whole second of the clock and returns
// it: a blob committed or touched before the call has an earlier time on
// every store, S3's whole seconds included, and one committed or touched
// after it a time at or after it. The store's server shares the test's
// clock.
func nextSecond() time.Time {
	next := time.Now().Truncate(time.Second).Add(time.Second)
	for time.Now().Before(next) {
		time.Sleep(time.Until(next))
	}
	return next
}

// sweeper returns s as a storage.Sweeper or fails the test.
func sweeper(t *testing.T, s storage.Blobs) storage.Sweeper {
	t.Helper()
	sw, ok := s.(storage.Sweeper)
	if !ok {
		t.Fatalf("%T does not implement storage.Sweeper", s)
	}
	return sw
}

// testListTouchDeleteIdle: List names every blob once with its size;
// a blob committed again or touched after since is kept by DeleteIdle,
// one idle since is deleted; a deleted or never stored blob is no error.
func testListTouchDeleteIdle(t *testing.T, s storage.Blobs) {
	ctx := context.Background()
	sw := sweeper(t, s)
	want := map[string]int64{}
	for i := range 3 {
		data := []byte(fmt.Sprintf("listed blob %d %s", i, make([]byte, i*100)))
		want[Put(t, s, data)] = int64(len(data))
	}
	got := map[string]int64{}
	err := sw.List(ctx, func(in storage.Info) error {
		if _, dup := got[in.Key]; dup {
			t.Errorf("List named %s twice", in.Key)
		}
		got[in.Key] = in.Size
		return nil
	})
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("List = %v, %v; want %v", got, err, want)
	}
	stop := errors.New("stop")
	if err := sw.List(ctx, func(storage.Info) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("List with a failing fn = %v, want its error", err)
	}

	// Each since falls between the blob's last commit or touch and the
	// next one, so that only that next one keeps it.
	data := []byte("re-added while being collected")
	key := Put(t, s, data)
	since := nextSecond()
	Put(t, s, data) // committed again after since
	if gone, err := sw.DeleteIdle(ctx, key, since); gone || err != nil {
		t.Fatalf("DeleteIdle of a blob committed again since = %v, %v; want it kept", gone, err)
	}
	since = nextSecond()
	if _, err := sw.Touch(ctx, key); err != nil {
		t.Fatalf("Touch: %v", err)
	}
	if gone, err := sw.DeleteIdle(ctx, key, since); gone || err != nil {
		t.Fatalf("DeleteIdle of a blob touched since = %v, %v; want it kept", gone, err)
	}
	if got := Get(t, s, key); string(got) != string(data) {
		t.Fatalf("kept blob reads %q", got)
	}
	if gone, err := sw.DeleteIdle(ctx, key, time.Now().Add(time.Hour)); !gone || err != nil {
		t.Fatalf("DeleteIdle of an idle blob = %v, %v; want it deleted", gone, err)
	}
	wantNotFound(t, s, key)
	if gone, err := sw.DeleteIdle(ctx, key, time.Now().Add(time.Hour)); gone || err != nil {
		t.Errorf("DeleteIdle of a deleted blob = %v, %v; want false, nil", gone, err)
	}
	if _, err := sw.Touch(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Touch of a deleted blob = %v, want ErrNotFound", err)
	}
	if _, err := storage.Touch(ctx, s, key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("storage.Touch of a deleted blob = %v, want ErrNotFound", err)
	}
}

// testSweepUnderIngest runs a collector over the store while writers keep
// re-adding the same bytes. Everything written is newer than the
// collector's since, so it must never delete anything, and no commit may
// fail because a collection had the blob in hand; then a collector
// whose since is later than every write deletes them all, while the
// writers go on, and a final write of each blob reads back whole.
func testSweepUnderIngest(t *testing.T, s storage.Blobs) {
	ctx := context.Background()
	sw := sweeper(t, s)
	since := time.Now().Add(-slack)
	contents := make([][]byte, 6)
	keys := make([]string, len(contents))
	for i := range contents {
		contents[i] = []byte(fmt.Sprintf("blob %d re-added by every fetch worker", i))
		keys[i] = Put(t, s, contents[i])
	}
	for _, phase := range []struct {
		name     string
		since    time.Time
		mayReuse bool
	}{{"nothing idle", since, false}, {"everything idle", time.Now().Add(time.Hour), true}} {
		var (
			stop    atomic.Bool
			wg      sync.WaitGroup
			deleted atomic.Int64
			errs    = make(chan error, 64)
		)
		for w := range 4 {
			wg.Go(func() {
				for n := 0; !stop.Load() || n < 5; n++ {
					i := (w + n) % len(contents)
					if _, err := PutErr(s, contents[i]); err != nil {
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			})
		}
		for range 20 {
			err := sw.List(ctx, func(in storage.Info) error {
				gone, err := sw.DeleteIdle(ctx, in.Key, phase.since)
				if gone {
					deleted.Add(1)
				}
				return err
			})
			if err != nil {
				t.Errorf("%s: collecting: %v", phase.name, err)
				break
			}
		}
		stop.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", phase.name, err)
		}
		if !phase.mayReuse && deleted.Load() > 0 {
			t.Errorf("%s: %d blobs deleted that were written after since", phase.name, deleted.Load())
		}
	}
	for i, data := range contents {
		if k := Put(t, s, data); k != keys[i] || !slices.Equal(Get(t, s, k), data) {
			t.Errorf("blob %d does not read back after the collections", i)
		}
	}
}
