package storagetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
)

func testSeek(t *testing.T, s storage.Blobs) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i % 251)
	}
	key := Put(t, s, data)
	b, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer b.Close()
	steps := []struct {
		offset int64
		whence int
		pos    int64
		n      int
	}{
		{100, io.SeekStart, 100, 10},
		{5, io.SeekCurrent, 115, 20},
		{-10, io.SeekEnd, 990, 10},
		{0, io.SeekStart, 0, 3},
		{500, io.SeekStart, 500, 500},
	}
	for _, st := range steps {
		pos, err := b.Seek(st.offset, st.whence)
		if err != nil || pos != st.pos {
			t.Fatalf("Seek(%d, %d) = %d, %v; want %d", st.offset, st.whence, pos, err, st.pos)
		}
		buf := make([]byte, st.n)
		if _, err := io.ReadFull(b, buf); err != nil {
			t.Fatalf("reading %d bytes at %d: %v", st.n, pos, err)
		}
		if want := data[pos : pos+int64(st.n)]; !bytes.Equal(buf, want) {
			t.Errorf("at %d read %v, want %v", pos, buf, want)
		}
	}
	if n, err := b.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("Read at the end = %d, %v; want 0, EOF", n, err)
	}
}

// testConcurrent runs writers of different and of identical content at once:
// each gets its right key and every blob reads back whole.
func testConcurrent(t *testing.T, s storage.Blobs) {
	const writers = 8
	contents := make([][]byte, writers)
	for i := range contents {
		if i%2 == 0 {
			contents[i] = bytes.Repeat([]byte("shared content "), 5000)
		} else {
			contents[i] = bytes.Repeat([]byte(fmt.Sprintf("writer %d ", i)), 5000)
		}
	}
	keys := make([]string, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			keys[i], errs[i] = PutErr(s, contents[i])
		})
	}
	wg.Wait()
	for i := range writers {
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
			continue
		}
		if want := sha256Hex(contents[i]); keys[i] != want {
			t.Errorf("writer %d key = %s, want %s", i, keys[i], want)
		}
		if got := Get(t, s, keys[i]); !bytes.Equal(got, contents[i]) {
			t.Errorf("writer %d: blob reads %d bytes, not what was written", i, len(got))
		}
	}
}

// testLarge streams a blob bigger than one upload part through the store and
// back, hashing on both sides, without holding it in memory.
func testLarge(t *testing.T, s storage.Blobs) {
	const size = 20 << 20
	ctx := context.Background()
	w, err := s.Create(ctx, storage.Expect{})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	defer w.Abort()
	want := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, want), stream(7, size)); err != nil {
		t.Fatalf("writing %d bytes: %v", size, err)
	}
	key, err := w.Commit(ctx)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if wantKey := hex.EncodeToString(want.Sum(nil)); key != wantKey {
		t.Fatalf("key = %s, want %s", key, wantKey)
	}
	b, err := s.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer b.Close()
	if b.Info().Size != size {
		t.Errorf("Info().Size = %d, want %d", b.Info().Size, size)
	}
	got := sha256.New()
	n, err := io.Copy(got, b)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if n != size || hex.EncodeToString(got.Sum(nil)) != key {
		t.Errorf("read back %d bytes hashing to %x, want %d bytes hashing to %s", n, got.Sum(nil), size, key)
	}
}

func testDelete(t *testing.T, s storage.Blobs) {
	d, ok := s.(storage.Deleter)
	if !ok {
		t.Fatalf("%T does not implement storage.Deleter", s)
	}
	ctx := context.Background()
	keep := Put(t, s, []byte("stays"))
	gone := Put(t, s, []byte("goes"))
	if err := d.Delete(ctx, gone); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantNotFound(t, s, gone)
	if err := d.Delete(ctx, gone); err != nil {
		t.Errorf("Delete of a deleted blob: %v, want nil", err)
	}
	if got := Get(t, s, keep); string(got) != "stays" {
		t.Errorf("other blob reads %q after a Delete", got)
	}
	if err := d.Delete(ctx, "../outside"); err == nil {
		t.Errorf("Delete of a malformed key succeeded")
	}
	// The same bytes can be stored again after a delete.
	if k := Put(t, s, []byte("goes")); k != gone || string(Get(t, s, k)) != "goes" {
		t.Errorf("re-storing deleted bytes gave key %s", k)
	}
}
