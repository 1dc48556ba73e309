package catalog

import (
	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/provenance"
)

// Per-entry byte bounds of SizeHint: fixed markup of an entry (url, loc,
// lastmod, rs:md with md5 and sha-256, length) and of one link (rs:ln
// with modified, hash of three algorithms, length, pri).
const (
	hintEntry = 400
	hintLink  = 400
	// hintRef is what each reference to the aggregator's own URIs adds
	// beyond the base URL and collection name: "/r/" and the scheme's
	// segment at their longest for a plain origin.
	hintRef = 8
)

// SizeHint bounds from above the bytes of a resource's Resource List
// entry, without building it, as fixed + refs*(len(base URL) +
// len(collection)): refs counts the aggregator URIs in the entry (its loc
// and each link rewritten to a copy), whose length depends on how the
// republisher is configured. The catalog keeps both numbers on each row
// (est, est_refs) so that a Resource List can be cut into parts under the
// sitemap byte limit by a sum over an index, without reading the rows;
// the republisher bounds entries of any catalog with it.
func SizeHint(typ string, up *viaduct.Change) (fixed, refs int64) {
	origin := int64(xmlLen(provenance.OriginURI(up)))
	fixed = hintEntry + hintRef + 3*origin + int64(xmlLen(typ))
	fixed += hintLink + 3*origin + int64(xmlLen(up.Type))
	refs = 1
	for _, l := range up.Links {
		if provenance.ActionFor(l.Rel) == provenance.Drop {
			continue
		}
		fixed += hintLink + hintRef + int64(3*xmlLen(l.Href)+xmlLen(l.Type)+xmlLen(l.Rel))
		refs++
	}
	return fixed, refs
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

// changeSizeHint is SizeHint of the entry a Change List renders from a
// change-log row of uri: the log keeps the row's URI, not the Source's,
// so the entry's upstream names uri. Where the two are the same the
// applier takes the resource's own bounds instead.
func changeSizeHint(typ, uri string, up *viaduct.Change) (fixed, refs int64) {
	named := *up
	named.URI = uri
	return SizeHint(typ, &named)
}
