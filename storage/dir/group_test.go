package dir

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestDirSyncerGroups checks that commits arriving while a sync runs are
// synced together by the next round, and that each caller returns only
// after a sync of its directory that began after it called.
func TestDirSyncerGroups(t *testing.T) {
	g := newDirSyncer()
	var mu sync.Mutex
	synced := map[string]int{} // dir -> syncs begun
	release := make(chan struct{})
	first := true
	g.sync = func(d string) error {
		mu.Lock()
		synced[d]++
		wait := first
		first = false
		mu.Unlock()
		if wait {
			<-release // hold the first round while the others gather
		}
		return nil
	}
	done := make(chan string, 20)
	go func() { g.syncAll("a"); done <- "a" }()
	waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return synced["a"] == 1 })
	for i := range 10 {
		d := fmt.Sprint("d", i%5)
		go func() { g.syncAll(d); done <- d }()
	}
	waitUntil(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.next != nil && len(g.next.dirs) == 5 })
	select {
	case d := <-done:
		t.Fatalf("syncAll(%s) returned before its directory was synced", d)
	default:
	}
	close(release)
	for range 11 {
		<-done
	}
	if g.batches != 2 {
		t.Errorf("%d rounds of syncs, want 2 (one held, one for all that gathered)", g.batches)
	}
	for i := range 5 {
		if n := synced[fmt.Sprint("d", i)]; n != 1 {
			t.Errorf("d%d synced %d times, want once for its two callers", i, n)
		}
	}
}

func TestDirSyncerError(t *testing.T) {
	g := newDirSyncer()
	bad := errors.New("disk gone")
	g.sync = func(d string) error {
		if d == "bad" {
			return bad
		}
		return nil
	}
	if err := g.syncAll("good", "bad"); !errors.Is(err, bad) {
		t.Errorf("syncAll with a failing directory: %v, want %v", err, bad)
	}
	if err := g.syncAll("good"); err != nil {
		t.Errorf("syncAll after a failure: %v", err)
	}
}

// TestCommitSyncsParentsOnce checks what a commit makes durable: the blob's
// directory every time, and the two directories holding its path the
// first time this process uses that fan-out directory.
func TestCommitSyncsParentsOnce(t *testing.T) {
	s := newStore(t)
	var mu sync.Mutex
	var synced []string
	s.dirs.sync = func(d string) error {
		mu.Lock()
		synced = append(synced, d)
		mu.Unlock()
		return syncDir(d)
	}
	put := func(data string) string {
		w, err := s.Create(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
		key, err := w.Commit(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	key := put("first")
	dir := filepath.Dir(s.path(key))
	want := []string{dir, filepath.Dir(dir), s.Root()}
	if slices.Sort(synced); !slices.Equal(synced, sorted(want)) {
		t.Errorf("first commit synced %v, want %v", synced, want)
	}
	synced = nil
	put("first") // the same blob again: its directory only
	if !slices.Equal(synced, []string{dir}) {
		t.Errorf("second commit of the blob synced %v, want %v", synced, []string{dir})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
