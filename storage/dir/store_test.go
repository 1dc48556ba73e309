package dir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(t.TempDir())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestSuite(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Blobs {
		s := newStore(t)
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

func TestLayout(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("layout"))
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.Root(), key[:2], key[2:4], key)
	data, err := os.ReadFile(p)
	if err != nil || string(data) != "layout" {
		t.Errorf("reading %s: %q, %v; want the blob's bytes", p, data, err)
	}
}

func TestNewCleansTemporaries(t *testing.T) {
	root := t.TempDir()
	s, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	// A writer that never ends stands for a crash mid-write.
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half a blob"))
	if left, _ := os.ReadDir(s.tmp); len(left) != 1 {
		t.Fatalf("want one temporary while writing, found %d", len(left))
	}
	s2, err := New(root)
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
	s, err := New(b.TempDir())
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
	ctx := context.Background()
	put := func() string {
		t.Helper()
		w, err := s.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("fan-out"))
		key, err := w.Commit(ctx)
		if err != nil {
			t.Fatalf("Commit: %v", err)
		}
		return key
	}
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
