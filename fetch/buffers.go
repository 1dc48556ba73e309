package fetch

import (
	"sync"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Sizes of the buffers a worker streams a bitstream through.
const (
	smallBuffer = 64 << 10
	largeBuffer = 1 << 20 // for bitstreams of resourcesync.LanesFrom bytes or more
)

// buffers holds the buffers a worker streams bitstreams through, by size,
// each aligned for a store's direct writes (storage.AlignedBuffer). A
// large bitstream is read a MiB at a time, and the directory store writes
// each whole MiB around the page cache (storage/dir.DirectFrom): on 1,000
// x 10 MB from a Source in another process, runs alternated with the
// build before (256 KiB through the page cache) took 25-28 s against
// 42-44 s and 30-34 CPU-ms a bitstream against 59-65; the same direct
// writes from 256 KiB buffers took 30-37 s, the disk taking small direct
// writes more slowly (docs/benchmarks.md). It holds more memory: about
// 230 MB at 64 transfers at once, against 110 MB. Small bitstreams keep
// 64 KiB, so that the many transfers of a baseline of small files hold
// little memory.
type buffers struct{ small, large sync.Pool }

// get returns a buffer for a bitstream of size bytes (negative when
// unknown); put gives it back.
func (b *buffers) get(size int64) *[]byte {
	pool, n := &b.small, smallBuffer
	if size >= resourcesync.LanesFrom {
		pool, n = &b.large, largeBuffer
	}
	if v, ok := pool.Get().(*[]byte); ok {
		return v
	}
	buf := storage.AlignedBuffer(n)
	return &buf
}

func (b *buffers) put(buf *[]byte) {
	if cap(*buf) == largeBuffer {
		b.large.Put(buf)
	} else {
		b.small.Put(buf)
	}
}
