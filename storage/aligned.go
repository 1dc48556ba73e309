package storage

import "unsafe"

// DirectAlign is the alignment of a write that may bypass the page cache
// (O_DIRECT): its bytes' address and length a multiple of it. It is the
// largest logical block size disks have (4 KiB), so a write aligned to it
// suits any of them.
const DirectAlign = 4096

// AlignedBuffer returns a buffer of n bytes whose first byte is aligned to
// DirectAlign. A writer handed whole buffers from it, each a multiple of
// DirectAlign long, may write them without copying them into the page
// cache (see storage/dir).
func AlignedBuffer(n int) []byte {
	raw := make([]byte, n+DirectAlign-1)
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % DirectAlign); r != 0 {
		off = DirectAlign - r
	}
	return raw[off : off+n : off+n]
}

// Aligned reports whether p may be written around the page cache: its
// address and its length are multiples of DirectAlign.
func Aligned(p []byte) bool {
	return len(p)%DirectAlign == 0 && uintptr(unsafe.Pointer(unsafe.SliceData(p)))%DirectAlign == 0
}
