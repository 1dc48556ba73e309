package catalog

import (
	"encoding/binary"
	"errors"
	"time"
)

// The streaming reads (ScanResources, ScanChanges) pass a million rows
// through the driver, where each column costs several cgo calls and an
// allocation; reading eighteen columns a row cost more than everything
// else a Resource List does. So every row also keeps what those reads need
// packed into one or two BLOB columns, written with the row's other
// columns in the same statement and read back with one column each:
//
//	resources.copy_pack  the aggregator's copy: length, type, changed,
//	                     seq and the op of that change
//	resources.up_pack    what the Source said: source, origin (one byte
//	                     when it is the URI), time, modified, hash,
//	                     length, type, links
//	changes.pack         the whole change-log row but its collection,
//	                     URI and digests
//
// The copy's digests are in neither pack: the rows keep them in their
// sha256 and md5 columns, which SQL reads, and the streaming reads put
// them before the packs (packedRow) and the URI after them, reading
// digests || copy_pack || up_pack || uri and digests || pack || uri as
// one string each. The Source's hash and type are a one-byte mark where
// they repeat the copy's (hashMark, typeMark). The copy and the Source's
// word are apart because a change the copy does not see (upstreamOnly)
// rewrites only the latter. The encoding is private to this package:
// strings and byte strings are a uvarint length and the bytes (an op
// or a media type a code of one byte where it has one, codes.go),
// integers varints, times a kind byte (0 zero, 1 UTC, 2 with an offset)
// then seconds, nanoseconds and the offset, links in the packed form of
// links.go (rows before schema 14 keep ops and types written out and
// links as encodeLinks's JSON). Since schema 9 the packs are the only
// record of what the Source said (schemaV9); the plain columns left are
// those SQL reads; since schema 10 each fact is kept once (schemaV10).

// errPack reports a pack that does not decode: a corrupt row.
var errPack = errors.New("malformed packed row")

// packer appends the fields of one pack to a buffer it reuses. With
// codes, it writes an op or a media type as its code (codes.go), as the
// applier does from schema 14; without, written out, as the migrations
// up to 13 wrote them, so that a file left between two steps reads the
// same to the builds that know them.
type packer struct {
	b     []byte
	codes bool
}

func (p *packer) reset() { p.b = p.b[:0] }

func (p *packer) str(s string) {
	p.b = binary.AppendUvarint(p.b, uint64(len(s)))
	p.b = append(p.b, s...)
}

func (p *packer) int(n int64) { p.b = binary.AppendVarint(p.b, n) }

func (p *packer) time(t time.Time) {
	if t.IsZero() {
		p.b = append(p.b, 0)
		return
	}
	_, off := t.Zone()
	if off == 0 {
		p.b = append(p.b, 1)
	} else {
		p.b = append(p.b, 2)
	}
	p.b = binary.AppendVarint(p.b, t.Unix())
	p.b = binary.AppendUvarint(p.b, uint64(t.Nanosecond()))
	if off != 0 {
		p.b = binary.AppendVarint(p.b, int64(off))
	}
}

// unpacker reads a pack in the order it was written. It reads a string,
// not bytes: the streaming reads take each row as one string (see
// ScanResources), so that every string field is a substring of it and
// costs no allocation of its own. It moves an offset rather than
// reslicing s: an unpacker is passed by pointer, so every store of a
// string into it would pass the garbage collector's write barrier, a
// dozen times a row. The first error sticks; the fields read after it are
// zero.
type unpacker struct {
	s   string
	i   int
	err error
}

func (u *unpacker) fail() {
	u.err = errPack
	u.i = len(u.s)
}

// rest is what is left to read.
func (u *unpacker) rest() string { return u.s[u.i:] }

// uvarint reads an unsigned varint as encoding/binary writes it.
func (u *unpacker) uvarint() uint64 {
	var x uint64
	s := u.s[u.i:]
	for j := 0; j < len(s) && j < binary.MaxVarintLen64; j++ {
		c := s[j]
		if c < 0x80 {
			if j == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			u.i += j + 1
			return x | uint64(c)<<(7*j)
		}
		x |= uint64(c&0x7f) << (7 * j)
	}
	u.fail()
	return 0
}

// str returns the next string, a substring of the pack.
func (u *unpacker) str() string {
	n := u.uvarint()
	if u.err != nil || uint64(len(u.s)-u.i) < n {
		u.fail()
		return ""
	}
	s := u.s[u.i : u.i+int(n)]
	u.i += int(n)
	return s
}

func (u *unpacker) int() int64 {
	ux := u.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (u *unpacker) time() time.Time {
	if u.i >= len(u.s) {
		u.fail()
		return time.Time{}
	}
	kind := u.s[u.i]
	u.i++
	if kind == 0 {
		return time.Time{}
	}
	sec := u.int()
	ns := u.uvarint()
	if u.err != nil || ns >= 1e9 {
		u.fail()
		return time.Time{}
	}
	t := time.Unix(sec, int64(ns))
	switch kind {
	case 1:
		return t.UTC()
	case 2:
		return t.In(time.FixedZone("", int(u.int())))
	}
	u.fail()
	return time.Time{}
}

// flag reads a presence byte.
func (u *unpacker) flag() bool {
	if u.i >= len(u.s) {
		u.fail()
		return false
	}
	f := u.s[u.i]
	u.i++
	if f > 1 {
		u.fail()
	}
	return f == 1
}
