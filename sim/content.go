package sim

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
)

// ContentType is the media type of every simulated bitstream.
const ContentType = "application/octet-stream"

// versionSeed derives the generator seed of one version of one resource, so
// that its bytes never need to be stored.
func versionSeed(seed int64, id int, version uint32) [32]byte {
	var b [20]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(seed))
	binary.LittleEndian.PutUint64(b[8:], uint64(id))
	binary.LittleEndian.PutUint32(b[16:], version)
	return sha256.Sum256(b[:])
}

// versionSize draws a version's size from its seed, uniformly in [min, max].
func versionSize(vs [32]byte, min, max int64) int64 {
	span := uint64(max-min) + 1
	return min + int64(binary.LittleEndian.Uint64(vs[:8])%span)
}

// contentReader yields a version's bytes: a ChaCha8 stream of the right
// length.
type contentReader struct {
	gen  *rand.ChaCha8
	left int64
}

func newContent(vs [32]byte, size int64) *contentReader {
	return &contentReader{gen: rand.NewChaCha8(vs), left: size}
}

func (c *contentReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, _ := c.gen.Read(p)
	c.left -= int64(n)
	return n, nil
}

// digests hashes a version's bytes once, when it is created.
func digests(vs [32]byte, size int64, buf []byte) (m [md5.Size]byte, s [sha256.Size]byte) {
	hm, hs := md5.New(), sha256.New()
	w := io.MultiWriter(hm, hs)
	io.CopyBuffer(w, newContent(vs, size), buf)
	hm.Sum(m[:0])
	hs.Sum(s[:0])
	return m, s
}
