package harvester

import (
	"cmp"
	"hash/maphash"
	"slices"
)

// uriSet is the set of URIs a baseline listed, kept as 128-bit hashes
// (two maphash seeds) rather than strings, in a slice that is sorted once
// the listing is read: 16 bytes per URI (32 while the slice grows), where
// a map of the same keys took 74 in a 250,000-resource baseline's heap
// profile, so a Source of five million resources costs some 80-160 MB
// during its baseline. Two URIs sharing both hashes (odds near 2^-128 per
// pair, drawn anew each baseline) would only hide one deletion until the
// next baseline.
type uriSet struct {
	s1, s2 maphash.Seed
	keys   []uriKey
	// settled is how many of keys are sorted and distinct; add appends
	// past it, and the next has or len sorts the whole again.
	settled int
}

type uriKey struct{ a, b uint64 }

func compareKeys(x, y uriKey) int {
	if c := cmp.Compare(x.a, y.a); c != 0 {
		return c
	}
	return cmp.Compare(x.b, y.b)
}

func newURISet() *uriSet {
	return &uriSet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed()}
}

func (u *uriSet) key(s string) uriKey {
	return uriKey{maphash.String(u.s1, s), maphash.String(u.s2, s)}
}

func (u *uriSet) add(s string) { u.keys = append(u.keys, u.key(s)) }

func (u *uriSet) has(s string) bool {
	u.settle()
	_, ok := slices.BinarySearchFunc(u.keys, u.key(s), compareKeys)
	return ok
}

// len is the number of distinct URIs added.
func (u *uriSet) len() int {
	u.settle()
	return len(u.keys)
}

// settle sorts the keys and drops repeats (a list may name a URI twice).
func (u *uriSet) settle() {
	if u.settled == len(u.keys) {
		return
	}
	slices.SortFunc(u.keys, compareKeys)
	u.keys = slices.CompactFunc(u.keys, func(x, y uriKey) bool { return x == y })
	u.settled = len(u.keys)
}
