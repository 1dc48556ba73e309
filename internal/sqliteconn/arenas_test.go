package sqliteconn

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestArenasStayCapped: threads that run SQLite for the first time share
// the arenas there are instead of each making one (up to eight a core
// without the cap).
func TestArenasStayCapped(t *testing.T) {
	before := countArenas()
	if before < 0 {
		if arenaCap() != 0 {
			t.Fatal("a cap was set where malloc_info cannot count arenas")
		}
		t.Log("not glibc: nothing to cap")
		return
	}
	if _, set := os.LookupEnv("MALLOC_ARENA_MAX"); set {
		t.Fatal("run without MALLOC_ARENA_MAX: the operator's setting is left in place, so the cap is not under test")
	}
	if arenaCap() < 2 {
		t.Fatalf("arena cap %d at load; want one per core, at least 2", arenaCap())
	}
	db := Open("file:" + filepath.Join(t.TempDir(), "t.db"))
	defer db.Close()
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	// Each goroutine holds a thread of its own while it runs statements,
	// all of them at once: every one allocates in C on its own thread.
	var start, wg sync.WaitGroup
	start.Add(1)
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start.Wait()
			for j := range 20 {
				if _, err := db.Exec(`INSERT INTO t VALUES (?)`, fmt.Sprint(i, j)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	start.Done()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n, limit := countArenas(), max(before, arenaCap()); n > limit {
		t.Errorf("%d arenas after 16 threads ran SQLite (%d before, cap %d); want at most %d", n, before, arenaCap(), limit)
	}
}

// TestArenasLeaveTheOperatorsSetting: a program started with
// MALLOC_ARENA_MAX keeps it; the load-time cap sets nothing over it.
func TestArenasLeaveTheOperatorsSetting(t *testing.T) {
	if os.Getenv("SQLITECONN_ARENA_CHILD") == "1" {
		fmt.Printf("cap=%d\n", arenaCap())
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestArenasLeaveTheOperatorsSetting$")
	cmd.Env = append(os.Environ(), "SQLITECONN_ARENA_CHILD=1", "MALLOC_ARENA_MAX=4")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "cap=0\n") {
		t.Errorf("with MALLOC_ARENA_MAX=4 the child reports %q; want cap=0", out)
	}
}
