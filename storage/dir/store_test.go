package dir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// newStore opens a store in a new directory; unless opts say otherwise,
// every blob has a file of its own, which most tests here look at.
func newStore(t *testing.T, opts ...Option) *Store {
	t.Helper()
	s, err := New(t.TempDir(), append([]Option{PackBelow(0)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSuite runs the suite on the store as New makes it: small blobs
// packed, larger ones in files of their own.
func TestSuite(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Blobs {
		s := newStore(t, PackBelow(DefaultPackBelow))
		t.Cleanup(func() { wantNoTemporaries(t, s) })
		return s
	})
}

// TestSuiteFiles runs the suite with every blob in a file of its own.
func TestSuiteFiles(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Blobs {
		s := newStore(t)
		t.Cleanup(func() { wantNoTemporaries(t, s) })
		return s
	})
}

// TestSuiteNamedTemporaries runs the suite with named temporaries, what
// the store uses where anonymous files cannot be made.
func TestSuiteNamedTemporaries(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Blobs {
		s := newStore(t)
		s.anon, s.direct = false, false // direct writes need anonymous files
		t.Cleanup(func() { wantNoTemporaries(t, s) })
		return s
	})
}

// wantNoTemporaries checks that every writer cleaned up after itself.
func wantNoTemporaries(t *testing.T, s *Store) {
	t.Helper()
	left, err := os.ReadDir(s.tmp)
	if err != nil {
		t.Fatalf("reading %s: %v", s.tmp, err)
	}
	for _, e := range left {
		t.Errorf("temporary %s left behind", e.Name())
	}
}

func TestNewCleansTemporaries(t *testing.T) {
	root := t.TempDir()
	s, err := New(root, PackBelow(0))
	if err != nil {
		t.Fatal(err)
	}
	s.anon = false // an anonymous temporary leaves nothing to clean
	// A writer that never ends stands for a crash mid-write.
	w, err := s.Create(context.Background(), storage.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half a blob"))
	if left, _ := os.ReadDir(s.tmp); len(left) != 1 {
		t.Fatalf("want one temporary while writing, found %d", len(left))
	}
	s2, err := New(root, PackBelow(0))
	if err != nil {
		t.Fatalf("New after a crash: %v", err)
	}
	wantNoTemporaries(t, s2)
	w.Abort()
}

func TestNewNeedsPath(t *testing.T) {
	if _, err := New(""); err == nil {
		t.Error("New(\"\") succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := New(file); err == nil {
		t.Errorf("New(%s) on a plain file succeeded", file)
	}
}

func BenchmarkPut(b *testing.B) {
	s, err := New(b.TempDir(), PackBelow(0))
	if err != nil {
		b.Fatal(err)
	}
	storagetest.BenchmarkPut(b, s)
}

// TestFanOutRemovedUnderTheStore: the store remembers the fan-out
// directories it made, and makes one again when it was removed behind
// its back, instead of failing the commit.
func TestFanOutRemovedUnderTheStore(t *testing.T) {
	s := newStore(t)
	put := func() string { return storagetest.Put(t, s, []byte("fan-out")) }
	key := put()
	if !s.fanOut.known(key) {
		t.Errorf("fan-out directory of %s not remembered after a commit into it", key)
	}
	if err := os.RemoveAll(filepath.Join(s.Root(), key[:2])); err != nil {
		t.Fatal(err)
	}
	if got := put(); got != key {
		t.Fatalf("second commit: key %s, want %s", got, key)
	}
	if data, err := os.ReadFile(s.path(key)); err != nil || string(data) != "fan-out" {
		t.Errorf("blob after its fan-out directory was made again: %q, %v", data, err)
	}
	wantNoTemporaries(t, s)
}

// TestNotFoundNamesTheKey: the error of a blob not stored is
// storage.ErrNotFound and says which blob was asked for.
func TestNotFoundNamesTheKey(t *testing.T) {
	s := newStore(t)
	key := strings.Repeat("ab", 32)
	_, err := s.Stat(context.Background(), key)
	if !errors.Is(err, storage.ErrNotFound) || !strings.Contains(err.Error(), key) {
		t.Errorf("Stat of a missing blob: %v; want ErrNotFound naming %s", err, key)
	}
}

// TestAnonymousTemporaries: where the system has anonymous files, a blob
// being written has no name at all until it is committed, an aborted one
// leaves nothing, and a committed one is under its key only. Where it
// has not (a file system without O_TMPFILE, no /proc), the store says so
// and writes a named temporary instead.
func TestAnonymousTemporaries(t *testing.T) {
	s := newStore(t)
	t.Logf("anonymous temporaries: %v (%s)", s.anon, runtime.GOOS)
	ctx := context.Background()
	aborted, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	aborted.Write([]byte("aborted"))
	w, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("committed"))
	left, err := os.ReadDir(s.tmp)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 0, false: 2}[s.anon]; len(left) != want {
		t.Errorf("%d names in %s while two blobs are written (anonymous: %v), want %d", len(left), s.tmp, s.anon, want)
	}
	if err := aborted.Abort(); err != nil {
		t.Errorf("Abort: %v", err)
	}
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	filepath.WalkDir(s.Root(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != filepath.Join(s.Root(), LayoutFile) {
			names = append(names, p)
		}
		return err
	})
	if len(names) != 1 || names[0] != s.path(key) {
		t.Errorf("files in the store: %v, want only %s", names, s.path(key))
	}
	if data, err := os.ReadFile(s.path(key)); err != nil || string(data) != "committed" {
		t.Errorf("committed blob: %q, %v", data, err)
	}
}

// TestCommitAfterSumAndMoreBytes: Commit reuses the digest of a Sum only
// while nothing was written since.
func TestCommitAfterSumAndMoreBytes(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	w, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("before the sum, "))
	w.Sum()
	w.Write([]byte("after it"))
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256Hex("before the sum, after it"); key != want {
		t.Errorf("key %s, want %s, the digest of every byte written", key, want)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
