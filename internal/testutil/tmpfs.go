package testutil

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size ("24m") at a new directory, unmounted
// when the test ends, so that a test can fill a file system and grow it.
// It needs root: without it the test is skipped, or fails in CI.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	d := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", d).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs: %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (root needed): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", d).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", d, err, out)
		}
	})
	return d
}

// GrowDisk gives the tmpfs SmallDisk mounted at d a new size, in place:
// what is on it stays, and whoever had it open keeps it open.
func GrowDisk(t testing.TB, d, size string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,size="+size, d).CombinedOutput(); err != nil {
		t.Fatalf("grow the disk at %s: %v: %s", d, err, out)
	}
}

// FillDisk writes a file named filler in d until its file system is full.
func FillDisk(t testing.TB, d string) {
	t.Helper()
	f, err := os.Create(filepath.Join(d, "filler"))
	if errors.Is(err, syscall.ENOSPC) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatalf("filling the disk: %v", err)
		}
	}
}
