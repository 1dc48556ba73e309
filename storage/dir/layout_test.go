package dir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// TestLayoutKeptAcrossOpens: a new store records one level and keeps it.
func TestLayoutKeptAcrossOpens(t *testing.T) {
	root := t.TempDir()
	s, err := New(root, PackBelow(0))
	if err != nil {
		t.Fatal(err)
	}
	key := storagetest.Put(t, s, []byte("one level"))
	if data, err := os.ReadFile(filepath.Join(root, key[:2], key)); err != nil || string(data) != "one level" {
		t.Fatalf("new store: root/ab/key holds %q, %v; want the blob's bytes", data, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, LayoutFile)); err != nil || strings.TrimSpace(string(b)) != "fan-out 1" {
		t.Fatalf("layout file: %q, %v", b, err)
	}
	again, err := New(root, PackBelow(0))
	if err != nil {
		t.Fatal(err)
	}
	if again.depth != oneLevel {
		t.Fatalf("reopened with depth %d, want %d", again.depth, oneLevel)
	}
	if _, err := again.Stat(context.Background(), key); err != nil {
		t.Errorf("reopened store cannot find its blob: %v", err)
	}
}

// TestLayoutOfAnOlderStore: a root with blobs at root/ab/cd/key and no
// layout file is a store made before layouts were recorded: it keeps two
// levels, finds the blobs it has and stores new ones beside them.
func TestLayoutOfAnOlderStore(t *testing.T) {
	root := t.TempDir()
	sum := sha256.Sum256([]byte("old blob"))
	old := hex.EncodeToString(sum[:])
	dir := filepath.Join(root, old[:2], old[2:4])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, old), []byte("old blob"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(root, PackBelow(0))
	if err != nil {
		t.Fatal(err)
	}
	if s.depth != twoLevel {
		t.Fatalf("older store opened with depth %d, want %d", s.depth, twoLevel)
	}
	ctx := context.Background()
	if info, err := s.Stat(ctx, old); err != nil || info.Size != int64(len("old blob")) {
		t.Fatalf("older store's blob: %+v, %v", info, err)
	}
	key := storagetest.Put(t, s, []byte("new blob"))
	if _, err := os.Stat(filepath.Join(root, key[:2], key[2:4], key)); err != nil {
		t.Errorf("older store: new blob not at root/ab/cd/key: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, LayoutFile)); strings.TrimSpace(string(b)) != "fan-out 2" {
		t.Errorf("layout file of the older store: %q, want fan-out 2", b)
	}
}

// TestLayoutUnknown: a layout file this version cannot read stops New
// rather than storing blobs where no other version would look.
func TestLayoutUnknown(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, LayoutFile), []byte("fan-out 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(root, PackBelow(0)); err == nil || !strings.Contains(err.Error(), "fan-out 3") {
		t.Fatalf("New with an unknown layout: %v, want an error naming it", err)
	}
}
