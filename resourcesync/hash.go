package resourcesync

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"

	md5simd "github.com/minio/md5-simd"
)

// Hash algorithm names as the spec writes them in hash attributes.
const (
	MD5    = "md5"
	SHA1   = "sha-1"
	SHA256 = "sha-256"
)

// Hash is one value of a hash attribute: an algorithm and a lowercase hex
// digest.
type Hash struct {
	Alg   string
	Value string
}

// Hashes is the value of a hash attribute, which may name several digests
// of the same bitstream, separated by white space.
type Hashes []Hash

// ParseHashes reads a hash attribute. Digests of the algorithms this package
// computes must be readable (hex of the right length, or base64, see
// Digest) and are rewritten as lowercase hex; other algorithms are kept as
// they are.
func ParseHashes(s string) (Hashes, error) {
	var hs Hashes
	for _, f := range strings.Fields(s) {
		alg, val, ok := strings.Cut(f, ":")
		if !ok || alg == "" || val == "" {
			return nil, fmt.Errorf("hash %q: want algorithm:digest", f)
		}
		h := Hash{Alg: strings.ToLower(alg), Value: val}
		if h.normalize()&noteUnreadable != 0 {
			return nil, fmt.Errorf("hash %q: %s digest must be %d bytes in hex or base64", f, h.Alg, digestLen(h.Alg))
		}
		hs = append(hs, h)
	}
	return hs, nil
}

func digestLen(alg string) int {
	switch alg {
	case MD5:
		return md5.Size
	case SHA1:
		return sha1.Size
	case SHA256:
		return sha256.Size
	}
	return 0
}

// String writes the attribute form, "md5:… sha-256:…".
func (hs Hashes) String() string {
	var b strings.Builder
	for i, h := range hs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(h.Alg)
		b.WriteByte(':')
		b.WriteString(h.Value)
	}
	return b.String()
}

// Get returns the digest for alg, or "". For md5, sha-1 and sha-256 it is
// the digest in lowercase hex, and "" when the value declared cannot be
// read (see Digest): every comparison with a computed digest (a catalog
// lookup, a baseline's diff, a fetch skipped) then takes an unreadable
// digest as no digest, never as a different one.
func (hs Hashes) Get(alg string) string {
	for _, h := range hs {
		if h.Alg != alg {
			continue
		}
		n := digestLen(alg)
		if n == 0 || len(h.Value) == 2*n && isHex(h.Value) {
			return h.Value
		}
		if b := h.Digest(); b != nil {
			return hex.EncodeToString(b)
		}
		return ""
	}
	return ""
}

// LanesFrom is the expected length from which a Hasher computes md5 on the
// process's shared SIMD lanes (see NewHasherFor).
const LanesFrom = 1 << 20

// md5Lanes computes the md5 of up to 8 (AVX2) or 16 (AVX-512) large
// bitstreams at once on one core (github.com/minio/md5-simd, where the
// CPU has neither it falls back to crypto/md5). On a machine with AVX2 it
// reads 1.7-2 GB/s per core with 8 or more bitstreams written at once,
// where crypto/md5 reads 640-670 MB/s; but each digest waits for the
// lanes' next round, about 120 µs, so small bitstreams keep crypto/md5.
// It runs for the life of the process.
var md5Lanes = sync.OnceValue(md5simd.NewServer)

// lanesPiece is how many bytes a Hasher on the lanes gathers before it
// hands them to md5: a write that is not a multiple of md5's 64-byte
// block makes the lanes hash the bytes completing a block in a round of
// their own, and a socket's reads seldom are. On 1,000 x 10 MB bitstreams
// whole 64 KiB pieces took the lanes from 4.6 to 2.8 s of a 20 s profile
// (docs/benchmarks.md).
const lanesPiece = 64 << 10

// errFinished is what writing to a Hasher after its md5 was finished on
// the shared lanes returns.
var errFinished = errors.New("hasher: written after its Sum")

// Hasher computes md5 and sha-256 of what is written to it, and sha-1 when
// asked, in one pass.
type Hasher struct {
	md5, sha1, sha256 hash.Hash
	n                 int64
	// sum is the latest Sum, of the first sumAt bytes: a blob writer sums
	// before its owner commits, and the commit reuses it.
	sum   Hashes
	sumAt int64
	// lanes is set when md5 runs on the shared lanes; the first Sum or
	// Close gives the lane back and closes the Hasher.
	lanes  md5simd.Hasher
	closed bool
	// piece gathers the bytes for the lanes up to lanesPiece.
	piece []byte
}

// NewHasher returns a Hasher of md5, sha-1 and sha-256 for a bitstream of
// unknown length.
func NewHasher() *Hasher { return NewHasherFor(-1, true) }

// NewHasherFor returns a Hasher for a bitstream expected to be size bytes
// long (negative when unknown); it computes sha-1 only when withSHA1. From
// LanesFrom bytes its md5 is computed on lanes shared with every other
// such Hasher of the process: its first Sum finishes it (writing after it
// fails), and Close must be called to give the lane back.
func NewHasherFor(size int64, withSHA1 bool) *Hasher {
	h := &Hasher{sha256: sha256.New()}
	if size >= LanesFrom {
		h.lanes = md5Lanes().NewHash()
		h.md5 = h.lanes
		h.piece = make([]byte, 0, lanesPiece)
	} else {
		h.md5 = md5.New()
	}
	if withSHA1 {
		h.sha1 = sha1.New()
	}
	return h
}

// Write hashes p. It fails only on a Hasher whose md5 runs on the shared
// lanes, after its Sum or Close.
func (h *Hasher) Write(p []byte) (int, error) {
	if h.lanes != nil && h.closed {
		return 0, errFinished
	}
	if h.lanes != nil {
		h.writeLanes(p)
	} else {
		h.md5.Write(p)
	}
	if h.sha1 != nil {
		h.sha1.Write(p)
	}
	h.sha256.Write(p)
	h.n += int64(len(p))
	return len(p), nil
}

// writeLanes hands md5 on the lanes whole pieces of lanesPiece bytes,
// keeping the rest in h.piece (the lanes copy what they are given).
func (h *Hasher) writeLanes(p []byte) {
	if len(h.piece) > 0 {
		n := copy(h.piece[len(h.piece):cap(h.piece)], p)
		h.piece, p = h.piece[:len(h.piece)+n], p[n:]
		if len(h.piece) < cap(h.piece) {
			return
		}
		h.lanes.Write(h.piece)
		h.piece = h.piece[:0]
	}
	whole := len(p) - len(p)%lanesPiece
	if whole > 0 {
		h.lanes.Write(p[:whole])
	}
	h.piece = append(h.piece, p[whole:]...)
}

// Len is the number of bytes written.
func (h *Hasher) Len() int64 { return h.n }

// Sum returns the digests of what was written so far: md5, sha-1 when
// asked for, and sha-256. They are computed once for a given length.
func (h *Hasher) Sum() Hashes {
	if h.sum != nil && h.sumAt == h.n {
		return h.sum
	}
	if h.lanes != nil && h.closed {
		return nil
	}
	if h.lanes != nil {
		h.lanes.Write(h.piece)
		h.piece = h.piece[:0]
	}
	hs := Hashes{{MD5, hex.EncodeToString(h.md5.Sum(nil))}}
	if h.sha1 != nil {
		hs = append(hs, Hash{SHA1, hex.EncodeToString(h.sha1.Sum(nil))})
	}
	hs = append(hs, Hash{SHA256, hex.EncodeToString(h.sha256.Sum(nil))})
	// Capped, so that a caller's append never writes into the kept copy.
	hs = hs[:len(hs):len(hs)]
	h.sum, h.sumAt = hs, h.n
	if h.lanes != nil {
		h.Close()
	}
	return hs
}

// Close gives a lane of the shared md5 lanes back; it does nothing for
// a Hasher that has none, and may be called more than once.
func (h *Hasher) Close() {
	if h.lanes != nil && !h.closed {
		h.lanes.Close()
	}
	h.closed = true
}

// ParseHashesLoose reads a hash attribute as a reader of other people's
// documents must: each value must be algorithm:digest; a readable digest
// of a known algorithm, hex or base64, is rewritten as lowercase hex, and
// one that cannot be read (the spec's own examples have such) is kept as
// given, for a validator to flag and a verifier to ignore.
func ParseHashesLoose(s string) (Hashes, error) {
	return parseHashesInto(nil, s, nil)
}

// parseHashesInto is ParseHashesLoose appending to dst, so that the reader
// can give it room allocated with the entry; note, when not nil, gathers
// what was tolerated.
func parseHashesInto(dst Hashes, s string, note *hashNote) (Hashes, error) {
	hs := dst
	for s != "" {
		// Split on white space by hand: this runs for every entry, and
		// strings.Fields allocates.
		i := 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		f := s[i:j]
		s = s[j:]
		if f == "" {
			break
		}
		alg, val, ok := strings.Cut(f, ":")
		if !ok || alg == "" || val == "" {
			return nil, fmt.Errorf("hash %q: want algorithm:digest", f)
		}
		h := Hash{Alg: strings.ToLower(alg), Value: val}
		if n := h.normalize(); note != nil {
			*note |= n
		}
		hs = append(hs, h)
	}
	if len(hs) == 0 {
		return nil, nil
	}
	return hs, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
