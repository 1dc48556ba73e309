package sqlite

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
//	resources.copy_pack  the aggregator's copy: sha256, md5, length, type,
//	                     changed, seq and the op of that change
//	resources.up_pack    what the Source said: source, origin, up_time,
//	                     up_modified, up_hash, up_length, up_type, links
//	changes.pack         the whole change-log row but its collection
//
// The copy and the Source's word are apart because a change the copy does
// not see (upstreamOnly) rewrites only the latter. The encoding is private
// to this package: strings and byte strings are a uvarint length and the
// bytes, integers varints, times a kind byte (0 zero, 1 UTC, 2 with an
// offset) then seconds, nanoseconds and the offset, links their JSON as
// the links column holds it. The plain columns stay the record the rest of
// the package reads and the migration rebuilds the packs from.

// errPack reports a pack that does not decode: a corrupt row.
var errPack = errors.New("malformed packed row")

// packer appends the fields of one pack to a buffer it reuses.
type packer struct{ b []byte }

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
// costs no allocation of its own. The first error sticks; the fields read
// after it are zero.
type unpacker struct {
	s   string
	err error
}

func (u *unpacker) fail() {
	u.err = errPack
	u.s = ""
}

// uvarint reads an unsigned varint as encoding/binary writes it.
func (u *unpacker) uvarint() uint64 {
	var x uint64
	for i := 0; i < len(u.s) && i < binary.MaxVarintLen64; i++ {
		c := u.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			u.s = u.s[i+1:]
			return x | uint64(c)<<(7*i)
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	u.fail()
	return 0
}

// str returns the next string, a substring of the pack.
func (u *unpacker) str() string {
	n := u.uvarint()
	if u.err != nil || uint64(len(u.s)) < n {
		u.fail()
		return ""
	}
	s := u.s[:n]
	u.s = u.s[n:]
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
	if len(u.s) == 0 {
		u.fail()
		return time.Time{}
	}
	kind := u.s[0]
	u.s = u.s[1:]
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
	if len(u.s) == 0 {
		u.fail()
		return false
	}
	f := u.s[0]
	u.s = u.s[1:]
	if f > 1 {
		u.fail()
	}
	return f == 1
}
