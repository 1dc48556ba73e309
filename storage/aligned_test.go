package storage

import "testing"

func TestAlignedBuffer(t *testing.T) {
	for _, n := range []int{2 * DirectAlign, 1 << 20, 3 * DirectAlign} {
		for range 20 { // heap addresses differ from one allocation to the next
			b := AlignedBuffer(n)
			if len(b) != n || cap(b) != n {
				t.Fatalf("AlignedBuffer(%d): len %d cap %d", n, len(b), cap(b))
			}
			if !Aligned(b) {
				t.Fatalf("AlignedBuffer(%d) is not aligned to %d", n, DirectAlign)
			}
			if Aligned(b[1:DirectAlign+1]) || Aligned(b[:DirectAlign-1]) {
				t.Fatalf("Aligned takes a slice off the boundary or of an odd length for aligned")
			}
		}
	}
}
