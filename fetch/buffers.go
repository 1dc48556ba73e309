package fetch

import (
	"sync"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Sizes of the buffers a worker streams a bitstream through.
const (
	smallBuffer = 64 << 10
	largeBuffer = 256 << 10 // for bitstreams of resourcesync.LanesFrom bytes or more
)

// buffers holds the buffers a worker streams bitstreams through, by size.
// A large bitstream is read from the socket a quarter MiB at a time: with
// 64 KiB reads, copying out of the socket took 17.7 % of the machine in a
// profile of 1,000 x 10 MB from a Source in another process, with 256
// KiB 3.0 %, and six runs alternated with the build before took 23-30 s
// against 28-40 s (docs/benchmarks.md). Small bitstreams keep 64 KiB, so
// that the many transfers of a baseline of small files hold little
// memory.
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
	buf := make([]byte, n)
	return &buf
}

func (b *buffers) put(buf *[]byte) {
	if cap(*buf) == largeBuffer {
		b.large.Put(buf)
	} else {
		b.small.Put(buf)
	}
}
