package catalog

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// numbered is the event of seq n in the crash tests: every one creates its
// own resource, so every applied seq must appear once in the change log.
func numbered(n uint64) Applied {
	return Applied{Seq: n, At: t0.Add(time.Duration(n) * time.Millisecond),
		Event: event("s1", "c", fmt.Sprintf("http://s1/r%06d", n), cr, fmt.Sprint(n))}
}

// checkLog fails unless the change log is exactly seqs 1..last.
func checkLog(t *testing.T, c *Catalog, last uint64) {
	t.Helper()
	chs := changes(t, c, "c")
	if uint64(len(chs)) != last {
		t.Fatalf("change log has %d entries, want %d", len(chs), last)
	}
	for i, ch := range chs {
		if ch.Seq != uint64(i+1) {
			t.Fatalf("change log entry %d has seq %d: a gap or a duplicate", i, ch.Seq)
		}
	}
	if n, _, err := c.CountResources(context.Background(), "c"); err != nil || uint64(n) != last {
		t.Fatalf("CountResources = %d, %v; want %d", n, err, last)
	}
}

func TestCrashDropWithoutClose(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for n := uint64(1); n <= 100; n++ {
		b := numbered(n)
		if err := c.Apply(ctx, b.Seq, b.At, b.Event); err != nil {
			t.Fatal(err)
		}
	}
	// A copy of the files as they are on disk now, with no Close and no
	// checkpoint: what a killed process leaves behind.
	copied := filepath.Join(t.TempDir(), "catalog.db")
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, copied+suffix)
	}
	for _, p := range []string{path, copied} {
		re := openAt(t, p)
		if n := lastApplied(t, re); n != 100 {
			t.Fatalf("%s: LastApplied = %d after reopen, want 100", p, n)
		}
		// The applier resumes, and redelivery overlaps what was applied.
		for n := uint64(90); n <= 150; n++ {
			b := numbered(n)
			if err := re.Apply(ctx, b.Seq, b.At, b.Event); err != nil {
				t.Fatal(err)
			}
		}
		checkLog(t, re, 150)
	}
}

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// crashEnv names the catalog a child test process writes and then kills
// itself over.
const crashEnv = "VIADUCT_TEST_CATALOG_CRASH"

// TestCrashKilledChild is the child's side of TestCrashKilledProcess: it
// applies events 1..50 one by one, starts a batch of 51..5050, and sends
// itself SIGKILL while the batch may be anywhere between begin and commit
// (or, given a negative delay, just after the batch commits).
func TestCrashKilledChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		return
	}
	ctx := context.Background()
	c, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n := uint64(1); n <= 50; n++ {
		b := numbered(n)
		if err := c.Apply(ctx, b.Seq, b.At, b.Event); err != nil {
			t.Fatal(err)
		}
	}
	var batch []Applied
	for n := uint64(51); n <= 5050; n++ {
		batch = append(batch, numbered(n))
	}
	wait, _ := strconv.Atoi(os.Getenv(crashEnv + "_US"))
	if wait < 0 {
		// Die right after the commit, before anything else.
		if err := c.ApplyBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	} else {
		go c.ApplyBatch(ctx, batch)
		time.Sleep(time.Duration(wait) * time.Microsecond) // the moment of the crash, not a wait for anything
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func TestCrashKilledProcess(t *testing.T) {
	ctx := context.Background()
	// Kill the child at several moments of its batch, and after it.
	for _, us := range []int{0, 2000, 50000, -1} {
		t.Run(fmt.Sprintf("at%dus", us), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "catalog.db")
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKilledChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashEnv+"="+path, fmt.Sprintf("%s_US=%d", crashEnv, us))
			out, err := cmd.CombinedOutput()
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if err == nil || !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die of SIGKILL: %v\n%s", err, out)
			}
			c := openAt(t, path)
			last := lastApplied(t, c)
			if last != 50 && last != 5050 || us < 0 && last != 5050 {
				t.Fatalf("LastApplied = %d after the crash: a batch was torn or lost", last)
			}
			t.Logf("killed after %dµs: LastApplied %d", us, last)
			checkLog(t, c, last)
			// Resume with redelivery of everything.
			var batch []Applied
			for n := uint64(1); n <= 6000; n++ {
				batch = append(batch, numbered(n))
			}
			if err := c.ApplyBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			checkLog(t, c, 6000)
		})
	}
}
