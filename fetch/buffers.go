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
// A large bitstream is read from the socket a quarter MiB at a time: on
// 1,000 x 10 MB from a Source in another process that took a run from
// 22-24 s to 19-20 s and from 33-34 to 28-29 CPU-ms a bitstream
// (docs/benchmarks.md), since the socket is read, and the reads
// acknowledged, a quarter as often as with 64 KiB. Small bitstreams keep
// 64 KiB, so that a thousand transfers at once hold little memory.
type buffers struct{ small, large sync.Pool }

// get returns a buffer for a bitstream of size bytes (negative when
// unknown); put gives it back.
func (b *buffers) get(size int64) *[]byte {
	if size >= resourcesync.LanesFrom {
		if v, ok := b.large.Get().(*[]byte); ok {
			return v
		}
		buf := make([]byte, largeBuffer)
		return &buf
	}
	if v, ok := b.small.Get().(*[]byte); ok {
		return v
	}
	buf := make([]byte, smallBuffer)
	return &buf
}

func (b *buffers) put(buf *[]byte) {
	if cap(*buf) == largeBuffer {
		b.large.Put(buf)
	} else {
		b.small.Put(buf)
	}
}
