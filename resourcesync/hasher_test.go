package resourcesync

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestHasherDigests writes bitstreams of lengths around the block size and
// the lanes' threshold in chunks of varying size, many at once, and
// compares every digest with the standard library's.
func TestHasherDigests(t *testing.T) {
	lengths := []int{0, 1, 63, 64, 65, 1000, LanesFrom - 1, LanesFrom, LanesFrom + 1, 3*LanesFrom + 4097}
	var wg sync.WaitGroup
	for i, n := range lengths {
		for _, expect := range []int64{-1, int64(n), LanesFrom} {
			for _, withSHA1 := range []bool{false, true} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					checkHasher(t, rand.New(rand.NewPCG(uint64(i), uint64(expect))), n, expect, withSHA1)
				}()
			}
		}
	}
	wg.Wait()
}

func checkHasher(t *testing.T, rnd *rand.Rand, n int, expect int64, withSHA1 bool) {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(rnd.Uint32())
	}
	h := NewHasherFor(expect, withSHA1)
	defer h.Close()
	for rest := data; len(rest) > 0; {
		c := min(len(rest), 1+rnd.IntN(70000))
		if _, err := h.Write(rest[:c]); err != nil {
			t.Errorf("%d bytes expecting %d: Write: %v", n, expect, err)
			return
		}
		rest = rest[c:]
	}
	m, s1, s256 := md5.Sum(data), sha1.Sum(data), sha256.Sum256(data)
	want := Hashes{{MD5, hex.EncodeToString(m[:])}, {SHA256, hex.EncodeToString(s256[:])}}
	if withSHA1 {
		want = Hashes{want[0], {SHA1, hex.EncodeToString(s1[:])}, want[1]}
	}
	for range 2 {
		if got := h.Sum(); got.String() != want.String() || h.Len() != int64(n) {
			t.Errorf("%d bytes expecting %d, sha-1 %v: Sum = %s (%d bytes), want %s", n, expect, withSHA1, got, h.Len(), want)
		}
	}
}

// TestHasherOnLanesIsFinishedBySum checks that a Hasher computing md5 on
// the shared lanes refuses writes after its Sum and after Close, rather
// than give a digest of part of what was written.
func TestHasherOnLanesIsFinishedBySum(t *testing.T) {
	h := NewHasherFor(LanesFrom, false)
	h.Write([]byte("abc"))
	first := h.Sum()
	if _, err := h.Write([]byte("d")); !errors.Is(err, errFinished) {
		t.Errorf("Write after Sum = %v, want %v", err, errFinished)
	}
	if got := h.Sum(); got.String() != first.String() {
		t.Errorf("second Sum = %s, want %s", got, first)
	}
	h.Close()
	h.Close()

	h = NewHasherFor(LanesFrom, false)
	h.Write([]byte("abc"))
	h.Close()
	if _, err := h.Write([]byte("d")); !errors.Is(err, errFinished) {
		t.Errorf("Write after Close = %v, want %v", err, errFinished)
	}

	// Below the threshold a Hasher goes on after Sum, as crypto's do.
	h = NewHasherFor(10, true)
	h.Write([]byte("abc"))
	h.Sum()
	h.Write([]byte("d"))
	if got, want := h.Sum().Get(MD5), "e2fc714c4727ee9395f324cd2e7f331f"; got != want {
		t.Errorf("md5 of abcd after a Sum at abc = %s, want %s", got, want)
	}
}

// pieceRecorder stands for the lanes: it computes md5 and records the
// length of every write it is given.
type pieceRecorder struct {
	hash.Hash
	writes []int
}

func (r *pieceRecorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, len(p))
	return r.Hash.Write(p)
}

func (r *pieceRecorder) Close() {}

// TestHasherGivesLanesWholePieces writes a large bitstream in pieces of
// any size, as a socket returns them: the lanes get whole lanesPiece
// pieces, but for the rest at the Sum, and the md5 of every byte.
func TestHasherGivesLanesWholePieces(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 13))
	data := make([]byte, LanesFrom+5*lanesPiece+12345)
	for i := range data {
		data[i] = byte(rnd.Uint32())
	}
	h := NewHasherFor(int64(len(data)), false)
	h.lanes.Close()
	rec := &pieceRecorder{Hash: md5.New()}
	h.lanes, h.md5 = rec, rec
	for rest := data; len(rest) > 0; {
		c := min(len(rest), 1+rnd.IntN(3*lanesPiece))
		h.Write(rest[:c])
		rest = rest[c:]
	}
	m := md5.Sum(data)
	if got, want := h.Sum().Get(MD5), hex.EncodeToString(m[:]); got != want {
		t.Errorf("md5 %s, want %s", got, want)
	}
	last := len(rec.writes) - 1
	for i, n := range rec.writes {
		if n%lanesPiece != 0 && i != last {
			t.Errorf("write %d of %d to the lanes: %d bytes, not whole pieces of %d", i, len(rec.writes), n, lanesPiece)
		}
	}
	if rec.writes[last] != len(data)%lanesPiece {
		t.Errorf("last write to the lanes: %d bytes, want the %d left over", rec.writes[last], len(data)%lanesPiece)
	}
}
