package storagetest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Run checks that the stores newStore returns behave as storage.Blobs
// promises. Each subtest gets its own store from newStore, which must be
// empty.
func Run(t *testing.T, newStore func(t *testing.T) storage.Blobs) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Blobs)
	}{
		{"RoundTrip", testRoundTrip},
		{"Sum", testSum},
		{"Abort", testAbort},
		{"AbortAfterCommit", testAbortAfterCommit},
		{"SameContentTwice", testSameContentTwice},
		{"NotFound", testNotFound},
		{"Empty", testEmpty},
		{"Seek", testSeek},
		{"Concurrent", testConcurrent},
		{"Large", testLarge},
		{"Delete", testDelete},
		{"ListTouchDeleteIdle", testListTouchDeleteIdle},
		{"SweepUnderIngest", testSweepUnderIngest},
		{"Objects", testObjects},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

func testRoundTrip(t *testing.T, s storage.Blobs) {
	data := []byte("a bitstream kept by the aggregator\n")
	key := Put(t, s, data)
	if want := sha256Hex(data); key != want {
		t.Fatalf("Commit key = %s, want the sha-256 %s", key, want)
	}
	if got := Get(t, s, key); !bytes.Equal(got, data) {
		t.Errorf("Open read %q, want %q", got, data)
	}
	info, err := s.Stat(context.Background(), key)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	if info.Key != key || info.Size != int64(len(data)) || info.ModTime.IsZero() {
		t.Errorf("Stat = %+v, want key %s, size %d and a modification time", info, key, len(data))
	}
	b, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer b.Close()
	if bi := b.Info(); bi.Key != key || bi.Size != info.Size || !bi.ModTime.Equal(info.ModTime) {
		t.Errorf("Blob.Info = %+v, want %+v as Stat said", bi, info)
	}
}

func testSum(t *testing.T, s storage.Blobs) {
	small := []string{"first part, ", "second part, ", strings.Repeat("x", 70000)}
	large := []string{"first part, ", strings.Repeat("y", resourcesync.LanesFrom+12345), "last part"}
	for _, tc := range []struct {
		name  string
		want  storage.Expect
		parts []string
	}{
		{"sha-1 asked", storage.Expect{SHA1: true}, small},
		{"sha-1 not asked", storage.Expect{}, small},
		{"large", storage.Expect{Size: resourcesync.LanesFrom + 12365, SHA1: true}, large},
		{"large, shorter than expected", storage.Expect{Size: 10 * resourcesync.LanesFrom}, large},
		{"small, larger than expected", storage.Expect{Size: 3}, small},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sumCase(t, s, tc.want, tc.parts)
		})
	}
}

// sumCase writes parts to a blob created expecting want and checks its
// Sum, twice, and its key.
func sumCase(t *testing.T, s storage.Blobs, want storage.Expect, parts []string) {
	ctx := context.Background()
	w, err := s.Create(ctx, want)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Abort()
	if want.Size < resourcesync.LanesFrom {
		// A large blob's first Sum finishes it.
		if n, hs := w.Sum(); n != 0 || hs.Get(resourcesync.SHA256) != sha256Hex(nil) {
			t.Errorf("Sum before writing = %d, %s; want 0 and the empty digest", n, hs)
		}
	}
	var all []byte
	for _, p := range parts {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		all = append(all, p...)
	}
	md5Sum, sha1Sum := md5.Sum(all), sha1.Sum(all)
	wantSHA1 := ""
	if want.SHA1 {
		wantSHA1 = hex.EncodeToString(sha1Sum[:])
	}
	expected := resourcesync.Hashes{
		{Alg: resourcesync.MD5, Value: hex.EncodeToString(md5Sum[:])},
		{Alg: resourcesync.SHA1, Value: wantSHA1},
		{Alg: resourcesync.SHA256, Value: sha256Hex(all)},
	}
	for range 2 {
		n, hs := w.Sum()
		if n != int64(len(all)) {
			t.Errorf("Sum length = %d, want %d", n, len(all))
		}
		for _, h := range expected {
			if got := hs.Get(h.Alg); got != h.Value {
				t.Errorf("Sum %s = %q, want %q", h.Alg, got, h.Value)
			}
		}
	}
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if key != expected[2].Value {
		t.Errorf("Commit key = %s, want %s", key, expected[2].Value)
	}
	if got := Get(t, s, key); !bytes.Equal(got, all) {
		t.Errorf("the committed blob holds %d bytes, not the %d written", len(got), len(all))
	}
}

func testAbort(t *testing.T, s storage.Blobs) {
	ctx := context.Background()
	data := []byte("never to be seen")
	w, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}
	if key, err := w.Commit(ctx); err == nil {
		t.Errorf("Commit after Abort = %s, nil; want an error", key)
	}
	wantNotFound(t, s, sha256Hex(data))
}

func testAbortAfterCommit(t *testing.T, s storage.Blobs) {
	ctx := context.Background()
	data := []byte("kept after a late abort")
	w, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	w.Write(data)
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	if got := Get(t, s, key); !bytes.Equal(got, data) {
		t.Errorf("after Abort, blob reads %q, want %q", got, data)
	}
}

func testSameContentTwice(t *testing.T, s storage.Blobs) {
	ctx := context.Background()
	data := []byte("the same bytes from two mirrors")
	k1 := Put(t, s, data)
	first, err := s.Stat(ctx, k1)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	k2 := Put(t, s, data)
	if k1 != k2 {
		t.Fatalf("same bytes got keys %s and %s", k1, k2)
	}
	second, err := s.Stat(ctx, k2)
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	// The second commit touches the blob (storage.Sweeper), no more.
	if second.ModTime.Before(first.ModTime) || second.Size != first.Size {
		t.Errorf("second commit rewrote the blob: %+v, then %+v", first, second)
	}
	if got := Get(t, s, k2); !bytes.Equal(got, data) {
		t.Errorf("blob reads %q, want %q", got, data)
	}
	if d, ok := s.(storage.Deleter); ok {
		if err := d.Delete(ctx, k1); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		wantNotFound(t, s, k1)
	}
}

func testNotFound(t *testing.T, s storage.Blobs) {
	wantNotFound(t, s, sha256Hex([]byte("nobody wrote this")))
	for _, bad := range []string{"", "../../etc/passwd", strings.Repeat("A", 64), "tmp/x"} {
		wantNotFound(t, s, bad)
	}
}

func testEmpty(t *testing.T, s storage.Blobs) {
	key := Put(t, s, nil)
	if want := sha256Hex(nil); key != want {
		t.Fatalf("empty blob key = %s, want %s", key, want)
	}
	if got := Get(t, s, key); len(got) != 0 {
		t.Errorf("empty blob reads %d bytes", len(got))
	}
	info, err := s.Stat(context.Background(), key)
	if err != nil || info.Size != 0 {
		t.Errorf("Stat of empty blob = %+v, %v; want size 0", info, err)
	}
}
