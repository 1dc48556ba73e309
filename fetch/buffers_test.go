package fetch

import (
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/sim"
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
// holds a large buffer, nor a large one a small buffer.
func TestBuffersBySize(t *testing.T) {
	var b buffers
	for range 3 {
		l, s, u := b.get(resourcesync.LanesFrom), b.get(1024), b.get(-1)
		if len(*l) != largeBuffer || len(*s) != smallBuffer || len(*u) != smallBuffer {
			t.Fatalf("buffers of %d, %d and %d bytes for a large, a small and an unknown bitstream, want %d, %d, %d",
				len(*l), len(*s), len(*u), largeBuffer, smallBuffer, smallBuffer)
		}
		b.put(s)
		b.put(l)
		b.put(u)
	}
}
