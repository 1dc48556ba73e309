package dir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// TestGrouperGroups checks that commits arriving while a round runs are
// synced together by the next round, and that each caller returns only
// after a round that began after it called.
func TestGrouperGroups(t *testing.T) {
	var mu sync.Mutex
	synced := map[string]int{} // dir -> rounds that synced it
	rounds := 0
	release := make(chan struct{})
	g := newGrouper(func(dirs []string) error {
		mu.Lock()
		rounds++
		first := rounds == 1
		for _, d := range dirs {
			synced[d]++
		}
		mu.Unlock()
		if first {
			<-release // hold the first round while the others gather
		}
		return nil
	}, 0)
	done := make(chan string, 20)
	go func() { g.wait(g.mark(), "a"); done <- "a" }()
	waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return synced["a"] == 1 })
	for i := range 10 {
		d := fmt.Sprint("d", i%5)
		go func() { g.wait(g.mark(), d); done <- d }()
	}
	waitUntil(t, func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.next != nil && g.next.joined == 10 })
	select {
	case d := <-done:
		t.Fatalf("wait(%s) returned before its directory was synced", d)
	default:
	}
	close(release)
	for range 11 {
		<-done
	}
	if rounds != 2 {
		t.Errorf("%d rounds, want 2 (one held, one for all that gathered)", rounds)
	}
	for i := range 5 {
		if n := synced[fmt.Sprint("d", i)]; n != 1 {
			t.Errorf("d%d synced %d times, want once for its two callers", i, n)
		}
	}
}

// TestGrouperFailedRound checks that a failed round fails its own
// commits and every commit whose bytes were in flight while it ran, and
// no commit that began after it.
func TestGrouperFailedRound(t *testing.T) {
	bad := errors.New("write-back failed")
	fail := true
	g := newGrouper(func([]string) error {
		if fail {
			return bad
		}
		return nil
	}, 0)
	inFlight := g.mark() // a blob being written while the round fails
	if err := g.wait(g.mark(), "x"); !errors.Is(err, bad) {
		t.Errorf("wait in a failing round: %v, want %v", err, bad)
	}
	fail = false
	if err := g.wait(inFlight, "y"); !errors.Is(err, errEarlierRound) {
		t.Errorf("wait of a blob in flight during a failed round: %v, want %v", err, errEarlierRound)
	}
	if err := g.wait(g.mark(), "y"); err != nil {
		t.Errorf("wait of a blob begun after the failure: %v", err)
	}
}

// TestCommitSyncsParentsOnce checks what a commit makes durable when the
// store syncs directory by directory: the blob's directory every time,
// and the directories holding its path up to the root the first time this
// process uses that fan-out directory.
func TestCommitSyncsParentsOnce(t *testing.T) {
	s := newStore(t)
	var mu sync.Mutex
	var synced []string
	s.wholeFS = false
	s.group = newGrouper(func(dirs []string) error {
		mu.Lock()
		synced = append(synced, dirs...)
		mu.Unlock()
		return syncDirs(dirs)
	}, 0)
	key := storagetest.Put(t, s, []byte("first"))
	dir := filepath.Dir(s.path(key))
	want := []string{dir, s.Root()} // one level: root/ab
	if slices.Sort(synced); !slices.Equal(synced, sorted(want)) {
		t.Errorf("first commit synced %v, want %v", synced, want)
	}
	synced = nil
	storagetest.Put(t, s, []byte("first")) // the same blob again: its directory only
	if !slices.Equal(synced, []string{dir}) {
		t.Errorf("second commit of the blob synced %v, want %v", synced, []string{dir})
	}
}

// TestCommitWholeFS checks the syncfs path where the kernel has it: a
// commit takes two rounds, one before its link and one after.
func TestCommitWholeFS(t *testing.T) {
	s := newStore(t)
	if !s.wholeFS {
		// CI runs on Linux 5.8 or later, where syncfs reports errors: there
		// the path must be tested, not skipped.
		if os.Getenv("CI") == "true" {
			t.Fatal("no syncfs with error reporting on this system, which CI machines have")
		}
		t.Skip("no syncfs with error reporting on this system")
	}
	storagetest.Put(t, s, []byte("whole"))
	if s.group.started != 2 {
		t.Errorf("commit ran %d sync rounds, want 2", s.group.started)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, "the condition", ok)
}

// TestGrouperGap: with a gap, rounds start no closer than it, and the
// commits arriving while one is held back share it; the first commit of
// an idle store is not held back.
func TestGrouperGap(t *testing.T) {
	const gap = 200 * time.Millisecond
	var mu sync.Mutex
	var starts []time.Time
	g := newGrouper(func([]string) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return nil
	}, gap)
	begin := time.Now()
	if err := g.wait(g.mark(), "a"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d >= gap {
		t.Errorf("the first commit of an idle store waited %v, as if held back by the gap", d)
	}
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.wait(g.mark(), fmt.Sprint(i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(starts) < 2 || len(starts) > 3 {
		t.Fatalf("10 commits arriving together after a round ran %d rounds in all, want them to share one or two", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < gap {
			t.Errorf("round %d started %v after the previous one, want at least %v", i+1, d, gap)
		}
	}
}
