package dir

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/viaduct-mirror/viaduct/storage"
)

// isDirect reports whether f's writes bypass the page cache.
func isDirect(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	var ferr error
	if err := rc.Control(func(fd uintptr) { fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil || ferr != nil {
		t.Fatalf("F_GETFL: %v %v", err, ferr)
	}
	return fl&unix.O_DIRECT != 0
}

// needDirect fails (in CI) or skips the test where the file system of
// dir takes no direct writes.
func needDirect(t *testing.T, dir string) {
	t.Helper()
	if directWorks(dir) {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the file system of %s takes no direct writes", dir)
	}
	t.Skipf("the file system of %s takes no direct writes", dir)
}

// TestDirectWrites: a blob expected to be DirectFrom bytes or more is
// written around the page cache while its writes are whole aligned
// buffers; the first that is not (its tail) goes through the page cache,
// and so does the rest. What is stored is every byte written, in order,
// under its digest.
func TestDirectWrites(t *testing.T) {
	s := newStore(t, PackBelow(DefaultPackBelow))
	needDirect(t, s.tmp)
	ctx := context.Background()
	bw, err := s.Create(ctx, storage.Expect{Size: 2*DirectFrom + 5000})
	if err != nil {
		t.Fatal(err)
	}
	w := bw.(*writer)
	var want bytes.Buffer
	write := func(p []byte, direct bool) {
		t.Helper()
		for i := range p {
			p[i] = byte(want.Len() + i*7)
		}
		if _, err := w.Write(p); err != nil {
			t.Fatalf("Write of %d bytes: %v", len(p), err)
		}
		want.Write(p)
		if got := isDirect(t, w.f); got != direct {
			t.Fatalf("after %d bytes: direct writes %v, want %v", want.Len(), got, direct)
		}
	}
	buf := storage.AlignedBuffer(DirectFrom)
	write(buf, true)
	write(buf[:4*storage.DirectAlign], true)
	write(buf[1:5000], false) // off the boundary: through the page cache from here on
	write(buf[:DirectFrom-4*storage.DirectAlign], false)
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(want.Bytes())
	if key != hex.EncodeToString(sum[:]) {
		t.Fatalf("key %s, want the digest of the bytes written", key)
	}
	got, err := os.ReadFile(s.path(key))
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("stored %d bytes (%v), want the %d written", len(got), err, want.Len())
	}
}

// TestDirectWritesOnlyForLargeBlobs: a blob expected to be shorter than
// DirectFrom, or of unknown length, goes through the page cache, as
// every blob does with DirectWrites(false).
func TestDirectWritesOnlyForLargeBlobs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		size int64
		opts []Option
	}{
		{"shorter", DirectFrom - 1, nil},
		{"unknown length", -1, nil},
		{"off", DirectFrom, []Option{DirectWrites(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, tc.opts...)
			needDirect(t, s.tmp)
			bw, err := s.Create(ctx, storage.Expect{Size: tc.size})
			if err != nil {
				t.Fatal(err)
			}
			defer bw.Abort()
			w := bw.(*writer)
			if _, err := w.Write(storage.AlignedBuffer(DirectFrom)); err != nil {
				t.Fatal(err)
			}
			if w.f == nil || isDirect(t, w.f) {
				t.Fatalf("a blob expected to be %d bytes (%d options) is written directly", tc.size, len(tc.opts))
			}
		})
	}
}
