package fetch

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Bitstreams on both sides of the large buffers' threshold, several at
// once, are stored whole and verified.
func TestFetchStoresBitstreamsAroundTheLargeBufferSize(t *testing.T) {
	srv := startSim(t, sim.Config{Resources: 8, MinSize: resourcesync.LanesFrom - 300000, MaxSize: resourcesync.LanesFrom + 700000})
	q := startQueue(t)
	store, _ := dirStore(t)
	changes := simChanges(t, srv)
	var small, large int
	for _, it := range srv.Snapshot() {
		if it.Length >= resourcesync.LanesFrom {
			large++
		} else {
			small++
		}
	}
	if small == 0 || large == 0 {
		t.Fatalf("the Source has %d bitstreams under %d bytes and %d from it, want some of each", small, resourcesync.LanesFrom, large)
	}
	publishAndRun(t, q, store, srv, changes)
	checkStored(t, q, store, srv, changes)
}

// A buffer goes back to the pool of its size: a small bitstream never
// holds a large buffer, nor a large one a small buffer. Every buffer is
// aligned for a store's direct writes.
func TestBuffersBySize(t *testing.T) {
	var b buffers
	for range 3 {
		l, s, u := b.get(resourcesync.LanesFrom), b.get(1024), b.get(-1)
		if len(*l) != largeBuffer || len(*s) != smallBuffer || len(*u) != smallBuffer {
			t.Fatalf("buffers of %d, %d and %d bytes for a large, a small and an unknown bitstream, want %d, %d, %d",
				len(*l), len(*s), len(*u), largeBuffer, smallBuffer, smallBuffer)
		}
		if !storage.Aligned(*l) || !storage.Aligned(*s) {
			t.Fatalf("a buffer is not aligned to %d bytes", storage.DirectAlign)
		}
		b.put(s)
		b.put(l)
		b.put(u)
	}
}

// writeSizes records the length of each write.
type writeSizes []int

func (w *writeSizes) Write(p []byte) (int, error) {
	*w = append(*w, len(p))
	return len(p), nil
}

// A body that arrives in small pieces is handed to the store in whole
// buffers but the last, which a directory store writes around the page
// cache; a read error is remembered as the body's.
func TestReadErrHandsWholeBuffers(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 30000) // 300,000 bytes
	var sizes writeSizes
	src := &readErr{r: iotest.HalfReader(bytes.NewReader(body))}
	n, err := io.CopyBuffer(writerOnly{&sizes}, src, make([]byte, 64<<10))
	if err != nil || n != int64(len(body)) {
		t.Fatalf("copied %d bytes, %v; want %d", n, err, len(body))
	}
	want := writeSizes{65536, 65536, 65536, 65536, 37856}
	if !slices.Equal(sizes, want) {
		t.Fatalf("writes of %v bytes, want %v", sizes, want)
	}

	boom := errors.New("connection reset")
	src = &readErr{r: io.MultiReader(bytes.NewReader(body[:1000]), iotest.ErrReader(boom))}
	sizes = nil
	n, err = io.CopyBuffer(writerOnly{&sizes}, src, make([]byte, 64<<10))
	if !errors.Is(err, boom) || !errors.Is(src.err, boom) || n != 1000 {
		t.Fatalf("copy of a failing body: %d bytes, %v, remembered %v", n, err, src.err)
	}
}
