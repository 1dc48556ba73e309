package harvester

import "hash/maphash"

// uriSet is the set of URIs a baseline listed, kept as 128-bit hashes
// (two maphash seeds) rather than strings: about 40 bytes per URI with the
// map's overhead, so a Source of five million resources costs some 200 MB
// during its baseline. Two URIs sharing both hashes (odds near 2^-128 per
// pair, drawn anew each baseline) would only hide one deletion until the
// next baseline.
type uriSet struct {
	s1, s2 maphash.Seed
	m      map[[2]uint64]struct{}
}

func newURISet() *uriSet {
	return &uriSet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), m: map[[2]uint64]struct{}{}}
}

func (u *uriSet) key(s string) [2]uint64 {
	return [2]uint64{maphash.String(u.s1, s), maphash.String(u.s2, s)}
}

func (u *uriSet) add(s string)      { u.m[u.key(s)] = struct{}{} }
func (u *uriSet) has(s string) bool { _, ok := u.m[u.key(s)]; return ok }
func (u *uriSet) len() int          { return len(u.m) }
