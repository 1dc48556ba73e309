package sim

import (
	"encoding/hex"
	"io"
	"strconv"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// chunk is how many resources a Resource List copies under the lock at a
// time, so that a slow client never holds mutations up for long and no copy
// of the whole state is made.
const chunk = 1024

// parts is how many parts the Resource List has: ids are split into ranges
// of PartSize, so a part holds at most PartSize live resources and a
// resource stays in its part for life.
func (s *Source) parts() int {
	s.mu.RLock()
	n := len(s.res)
	s.mu.RUnlock()
	return max(1, (n+s.cfg.PartSize-1)/s.cfg.PartSize)
}

// writeResourceList writes the Resource List, or its Index when there is
// more than one part.
func writeResourceList(w io.Writer, s *Source, base string, f Fault) error {
	n := s.parts()
	if n == 1 {
		return writeResourceListPart(w, s, base, f, 1)
	}
	at := s.cfg.Now().UTC()
	entries := make([]resourcesync.Entry, n)
	for i := range entries {
		entries[i] = resourcesync.Entry{
			Loc: base + "/resourcelist-" + strconv.Itoa(i+1) + ".xml",
			MD:  &resourcesync.MD{At: at},
		}
	}
	return writeEntries(w, &resourcesync.Header{
		Root:  resourcesync.SitemapIndex,
		MD:    resourcesync.MD{Capability: resourcesync.CapResourceList, At: at},
		Links: up(base + PathCapabilities),
	}, entries...)
}

// writeResourceListPart writes part n (from 1) of the Resource List, the
// resources with ids in ((n-1)*PartSize, n*PartSize].
func writeResourceListPart(w io.Writer, s *Source, base string, f Fault, n int) error {
	h := &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapResourceList, At: s.cfg.Now().UTC()},
		Links: up(base + PathCapabilities),
	}
	if s.parts() > 1 {
		h.Links = append(h.Links, resourcesync.Link{Rel: "index", Href: base + PathResourceList})
	}
	wr, err := resourcesync.NewWriter(w, h)
	if err != nil {
		return err
	}
	lo, hi := (n-1)*s.cfg.PartSize, n*s.cfg.PartSize
	buf := make([]resource, 0, chunk)
	var sc scratch
	for i := lo; i < hi; i += chunk {
		buf = s.copyRange(buf[:0], i, min(i+chunk, hi))
		if len(buf) == 0 {
			break
		}
		for j := range buf {
			if buf[j].deleted {
				continue
			}
			id := i + j + 1
			if err := wr.Write(s.entry(&sc, base, id, &buf[j])); err != nil {
				return err
			}
		}
	}
	if f.ExtraLoc != "" {
		e := resourcesync.Entry{Loc: f.ExtraLoc, LastMod: s.epoch}
		if err := wr.Write(&e); err != nil {
			return err
		}
	}
	return wr.Close()
}

// copyRange appends the resources with index in [lo, hi) to buf.
func (s *Source) copyRange(buf []resource, lo, hi int) []resource {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if hi > len(s.res) {
		hi = len(s.res)
	}
	if lo >= hi {
		return buf
	}
	return append(buf, s.res[lo:hi]...)
}

// scratch is reused from entry to entry of a long list, so that writing one
// allocates little per entry; the writer is done with an entry when Write
// returns.
type scratch struct {
	e      resourcesync.Entry
	md     resourcesync.MD
	hs     [2]resourcesync.Hash
	length int64
	buf    []byte
}

// entry fills sc.e with the Resource List entry of resource id.
func (s *Source) entry(sc *scratch, base string, id int, r *resource) *resourcesync.Entry {
	sc.md = resourcesync.MD{Type: ContentType}
	sc.md.Hash, sc.md.Length = s.declaredInto(sc, id, r.size, r.md5[:], r.sha256[:])
	sc.e = resourcesync.Entry{Loc: base + resPath(id), LastMod: time.Unix(0, r.modified).UTC(), MD: &sc.md}
	return &sc.e
}

// declared is the hash attribute and length the Source states for a
// version, wrong on purpose when a fault says so.
func (s *Source) declared(id int, size int64, m, sh []byte) (resourcesync.Hashes, *int64) {
	return s.declaredInto(new(scratch), id, size, m, sh)
}

// declaredInto is declared using sc's storage: the digests' hex shares one
// string.
func (s *Source) declaredInto(sc *scratch, id int, size int64, m, sh []byte) (resourcesync.Hashes, *int64) {
	f := s.faults.forEntry(resPath(id))
	sc.buf = hex.AppendEncode(hex.AppendEncode(sc.buf[:0], m), sh)
	all := string(sc.buf)
	hs := sc.hs[:0]
	for _, alg := range s.cfg.Hashes {
		v := all[2*len(m):]
		if alg == resourcesync.MD5 {
			v = all[:2*len(m)]
		}
		if f.WrongHash {
			v = wrongDigest(v)
		}
		hs = append(hs, resourcesync.Hash{Alg: alg, Value: v})
	}
	sc.length = size
	if f.WrongLength {
		sc.length++
	}
	return hs, &sc.length
}

// wrongDigest changes the first hex digit of a digest.
func wrongDigest(v string) string {
	c := byte('0')
	if v[0] == '0' {
		c = '1'
	}
	return string(c) + v[1:]
}
