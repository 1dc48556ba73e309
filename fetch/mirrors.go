package fetch

import (
	"cmp"
	"slices"

	"github.com/viaduct-mirror/viaduct"
)

// candidates are the URIs a change's bitstream may be read from, in the
// order they are tried: the origin, then its rel="duplicate" mirrors by
// ascending pri (lower is preferred, as in the spec), those without a pri
// last, in document order. Each one still has to pass the Source's Policy.
func candidates(c *viaduct.Change) []string {
	type mirror struct {
		href string
		pri  int
	}
	var ms []mirror
	for _, l := range c.Links {
		if l.Rel == "duplicate" && l.Href != "" && l.Href != c.URI {
			ms = append(ms, mirror{l.Href, l.Pri})
		}
	}
	slices.SortStableFunc(ms, func(a, b mirror) int {
		switch {
		case a.pri == b.pri:
			return 0
		case a.pri == 0:
			return 1
		case b.pri == 0:
			return -1
		}
		return cmp.Compare(a.pri, b.pri)
	})
	uris := []string{c.URI}
	for _, m := range ms {
		if !slices.Contains(uris, m.href) {
			uris = append(uris, m.href)
		}
	}
	return uris
}
