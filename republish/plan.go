package republish

import (
	"context"
	"strings"

	"github.com/viaduct-mirror/viaduct/provenance"
)

// A Resource List past MaxEntries entries or MaxBytes bytes is served as a
// Resource List Index whose parts are URI ranges of the catalog: part k
// holds the resources whose harvested URI is in (after_k, last_k], the
// first part starting at the beginning and the last one open-ended. The
// ranges are fixed when the index is generated, by a scan of the
// collection; each part is then read in one consistent catalog read when it
// is fetched, and says when with its own at and completed. So parts never
// overlap and together cover every URI: a resource held throughout appears
// exactly once, one created after the index appears in the part whose
// range holds it, one deleted after the index is absent from its part (as
// it is from the catalog). The ranges travel in the part URIs, so any
// replica can serve any part without shared state.

// part is one URI range of a Resource List Index.
type part struct {
	after, last string
	entries     int
	bytes       int64
}

// docOverhead bounds the bytes of a list's header and closing tag.
const docOverhead = 2048

// plan scans a collection and cuts it into parts that respect the limits.
func (s *Server) plan(ctx context.Context, coll string) ([]part, error) {
	var parts []part
	cur := part{bytes: docOverhead}
	prev := ""
	err := s.cat.Resources(ctx, coll, "", 0, func(rec *Record) error {
		n := s.estimate(coll, rec)
		if cur.entries > 0 && (cur.entries >= s.cfg.MaxEntries || cur.bytes+n > s.cfg.MaxBytes) {
			cur.last = prev
			parts = append(parts, cur)
			cur = part{after: prev, bytes: docOverhead}
		}
		cur.entries++
		cur.bytes += n
		prev = rec.URI
		return nil
	})
	if err != nil {
		return nil, err
	}
	return append(parts, cur), nil
}

// estimate bounds the bytes of a record's entry from above without
// building it: fixed markup, the escaped loc, and each link that may be
// written with its attributes at their longest.
func (s *Server) estimate(coll string, rec *Record) int64 {
	const entry = 400 // url, loc, lastmod, rs:md with md5 and sha-256, length
	const link = 400  // rs:ln with modified, hash (md5, sha-1, sha-256), length, pri
	origin := provenance.OriginURI(&rec.Upstream)
	n := int64(entry + len(s.cfg.BaseURL) + len(coll) + 8 + 3*xmlLen(origin) + xmlLen(rec.Type))
	n += link + int64(3*xmlLen(origin)+xmlLen(rec.Upstream.Type))
	for _, l := range rec.Upstream.Links {
		if provenance.ActionFor(l.Rel) == provenance.Drop {
			continue
		}
		n += link + int64(len(s.cfg.BaseURL)+len(coll)+8+3*xmlLen(l.Href)+xmlLen(l.Type)+xmlLen(l.Rel))
	}
	return n
}

// xmlLen is the length of s once escaped for XML text or attributes.
func xmlLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&', '<', '>', '"', '\'', '\t', '\n', '\r':
			n += 5
		}
	}
	return n
}

// inRange reports whether uri belongs to a part whose upper bound is last
// ("" for no bound).
func inRange(uri, last string) bool {
	return last == "" || strings.Compare(uri, last) <= 0
}
