package s3

import (
	"bytes"
	"crypto/md5"
	"io"
	"testing"
)

// TestMD5ReadsItsInput: fed as minio-go feeds it (io.Copy from a section
// reader of the body), the Content-MD5 hash gives crypto/md5's digest and
// allocates nothing per body once warm, where io.Copy would allocate a
// 32 KiB buffer each time.
func TestMD5ReadsItsInput(t *testing.T) {
	for _, size := range []int{0, 1, 1024, 32 << 10, 100_000} {
		body := bytes.Repeat([]byte("viaduct "), size/8+1)[:size]
		h := newMD5()
		if _, err := io.Copy(h, io.NewSectionReader(bytes.NewReader(body), 0, int64(size))); err != nil {
			t.Fatal(err)
		}
		if got, want := h.Sum(nil), md5.Sum(body); !bytes.Equal(got, want[:]) {
			t.Errorf("%d bytes: md5 %x, want %x", size, got, want)
		}
	}
	body := io.NewSectionReader(bytes.NewReader(make([]byte, 1024)), 0, 1024)
	h := newMD5()
	allocs := testing.AllocsPerRun(100, func() {
		h.Reset()
		body.Seek(0, io.SeekStart)
		io.Copy(h, body)
	})
	if allocs != 0 {
		t.Errorf("hashing a 1 KiB body as minio-go does: %.0f allocations, want none", allocs)
	}
}
