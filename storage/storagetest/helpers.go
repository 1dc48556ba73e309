package storagetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
)

// Put stores data as PutErr does, failing the test (or benchmark) on any
// error. It returns the blob's key.
func Put(t testing.TB, s storage.Blobs, data []byte) string {
	t.Helper()
	key, err := PutErr(s, data)
	if err != nil {
		t.Fatalf("put %d bytes: %v", len(data), err)
	}
	return key
}

// PutErr writes data as one blob, created expecting its length, in
// writes of 4 KiB, so that concurrent writers interleave, and commits it.
// It returns the blob's key; for goroutines, which must not call t.Fatal.
func PutErr(s storage.Blobs, data []byte) (string, error) {
	ctx := context.Background()
	w, err := s.Create(ctx, storage.Expect{Size: int64(len(data))})
	if err != nil {
		return "", err
	}
	defer w.Abort()
	for len(data) > 0 {
		n := min(len(data), 4096)
		if _, err := w.Write(data[:n]); err != nil {
			return "", err
		}
		data = data[n:]
	}
	return w.Commit(ctx)
}

// Get reads a whole blob back, failing the test on any error.
func Get(t testing.TB, s storage.Blobs, key string) []byte {
	t.Helper()
	b, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return data
}

// wantNotFound checks that key is visible neither through Stat nor Open.
func wantNotFound(t testing.TB, s storage.Blobs, key string) {
	t.Helper()
	ctx := context.Background()
	if info, err := s.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat(%s) = %+v, %v; want ErrNotFound", key, info, err)
	}
	b, err := s.Open(ctx, key)
	if err == nil {
		b.Close()
	}
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Open(%s) error = %v; want ErrNotFound", key, err)
	}
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// stream is a deterministic source of pseudo-random bytes, so large blobs
// can be written and checked without holding them in memory.
func stream(seed uint64, n int64) io.Reader {
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	return io.LimitReader(rand.NewChaCha8(s), n)
}
