package catalog

import (
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// storedLink is an rs:ln link as the catalog's packs kept it in schemas
// 9 to 13, and as the migrations up to them write it: short keys, and no
// key for a field the link does not have. The JSON of
// resourcesync.Link itself names every field, empty or not, and took 275
// bytes for a describedby link that has three (BenchmarkCatalogSize).
// The migration to schema 9 re-encodes the links columns of schema 8.
type storedLink struct {
	Rel      string              `json:"r,omitempty"`
	Href     string              `json:"h,omitempty"`
	Modified time.Time           `json:"m,omitzero"`
	Hash     resourcesync.Hashes `json:"x,omitempty"`
	Length   *int64              `json:"l,omitempty"`
	Type     string              `json:"t,omitempty"`
	Encoding string              `json:"e,omitempty"`
	Path     string              `json:"p,omitempty"`
	Pri      int                 `json:"q,omitempty"`
	Extra    []xml.Attr          `json:"a,omitempty"`
}

// encodeLinks is the JSON of links as a pack kept it before schema 14
// (packLinks), "" for none: what the migrations write.
func encodeLinks(links []resourcesync.Link) (string, error) {
	if len(links) == 0 {
		return "", nil
	}
	out := make([]storedLink, len(links))
	for i, l := range links {
		out[i] = storedLink{Rel: l.Rel, Href: l.Href, Modified: l.Modified, Hash: l.Hash, Length: l.Length,
			Type: l.Type, Encoding: l.Encoding, Path: l.Path, Pri: l.Pri, Extra: l.Extra}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encode links: %w", err)
	}
	return string(b), nil
}

// decodeLinks reads what encodeLinks wrote.
func decodeLinks(s string) ([]resourcesync.Link, error) {
	var in []storedLink
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, err
	}
	out := make([]resourcesync.Link, len(in))
	for i, l := range in {
		out[i] = resourcesync.Link{Rel: l.Rel, Href: l.Href, Modified: l.Modified, Hash: l.Hash, Length: l.Length,
			Type: l.Type, Encoding: l.Encoding, Path: l.Path, Pri: l.Pri, Extra: l.Extra}
	}
	return out, nil
}

// From schema 14 a pack keeps its links in a binary form rather than as
// JSON, which took most of a repository's row: a describedby link cost
// about 120 bytes twice (the resource's up_pack and its change's pack),
// its keys, quotes and the host the URI already names. A packed list
// starts with linksPacked, a JSON one with '[', so rows written before
// the step are read as they are and no step rewrites a large catalog.
//
// The form, in the pack's encoding (pack.go): the count, then for each
// link its rel (a byte: an index in linkRels, or 0 and the rel as a
// string), a uvarint of flags saying which fields follow, and those in
// order. The href is the length of the prefix it shares with the row's
// URI and the rest of it. A field equal to the Source's own statement of
// the resource (a via link's time, hash, length and type usually are)
// is a flag with no bytes.
const linksPacked = 0x01

// linkRels are the relations a packed link names by index: the ones
// ResourceSync and its notifications use. Its order is part of the
// packs written: a new relation goes at the end, none is removed.
var linkRels = [...]string{"", "describedby", "describes", "via", "duplicate", "alternate", "canonical",
	"collection", "up", "index", "resourcesync", "memento", "original", "timegate", "timemap", "related",
	"license", "profile", "contents", "item", "cite-as", "author", "hub", "self"}

// The flags of a packed link, the frequent ones first: a via link that
// repeats the Source's statement, or a describedby link with a type,
// takes one byte of them.
const (
	linkHref       = 1 << iota // uvarint shared prefix with the URI, str rest
	linkModifiedUp             // the Source's modified time of the resource
	linkHashUp                 // the Source's hash of the resource
	linkLengthUp               // the Source's length of the resource
	linkTypeUp                 // the Source's type of the resource
	linkType                   // a media type, coded (codes.go)
	linkModified               // time
	linkHash                   // uvarint count, str alg and str value each
	linkLength                 // int
	linkEncoding               // str
	linkPath                   // str
	linkPri                    // int
	linkExtra                  // uvarint count, str space, local and value each
	linkFlags      = 1<<iota - 1
)

// linkBase is what a packed link's fields are told against: the URI of
// the row and what the Source said of the resource.
type linkBase struct {
	uri      string
	modified time.Time
	hash     resourcesync.Hashes
	length   *int64
	typ      string
}

// packLinks is links in the packed form against b, "" for none.
func packLinks(links []resourcesync.Link, b *linkBase) string {
	if len(links) == 0 {
		return ""
	}
	p := packer{b: make([]byte, 0, 64*len(links)), codes: true}
	p.b = append(p.b, linksPacked)
	p.b = binary.AppendUvarint(p.b, uint64(len(links)))
	for i := range links {
		p.packLink(&links[i], b)
	}
	return string(p.b)
}

func (p *packer) packLink(l *resourcesync.Link, b *linkBase) {
	if i := slices.Index(linkRels[:], l.Rel); i > 0 {
		p.b = append(p.b, byte(i))
	} else {
		p.b = append(p.b, 0)
		p.str(l.Rel)
	}
	var f uint64
	if l.Href != "" {
		f |= linkHref
	}
	switch {
	case l.Modified.IsZero():
	case samePackedTime(l.Modified, b.modified):
		f |= linkModifiedUp
	default:
		f |= linkModified
	}
	switch {
	case len(l.Hash) == 0:
	case slices.Equal(l.Hash, b.hash):
		f |= linkHashUp
	default:
		f |= linkHash
	}
	switch {
	case l.Length == nil:
	case b.length != nil && *l.Length == *b.length:
		f |= linkLengthUp
	default:
		f |= linkLength
	}
	switch {
	case l.Type == "":
	case l.Type == b.typ:
		f |= linkTypeUp
	default:
		f |= linkType
	}
	if l.Encoding != "" {
		f |= linkEncoding
	}
	if l.Path != "" {
		f |= linkPath
	}
	if l.Pri != 0 {
		f |= linkPri
	}
	if len(l.Extra) > 0 {
		f |= linkExtra
	}
	p.b = binary.AppendUvarint(p.b, f)
	if f&linkHref != 0 {
		n := sharedPrefix(l.Href, b.uri)
		p.b = binary.AppendUvarint(p.b, uint64(n))
		p.str(l.Href[n:])
	}
	if f&linkModified != 0 {
		p.time(l.Modified)
	}
	if f&linkHash != 0 {
		p.b = binary.AppendUvarint(p.b, uint64(len(l.Hash)))
		for _, h := range l.Hash {
			p.str(h.Alg)
			p.str(h.Value)
		}
	}
	if f&linkLength != 0 {
		p.int(*l.Length)
	}
	if f&linkType != 0 {
		p.coded(l.Type, mediaCodes)
	}
	if f&linkEncoding != 0 {
		p.str(l.Encoding)
	}
	if f&linkPath != 0 {
		p.str(l.Path)
	}
	if f&linkPri != 0 {
		p.int(int64(l.Pri))
	}
	if f&linkExtra != 0 {
		p.b = binary.AppendUvarint(p.b, uint64(len(l.Extra)))
		for _, a := range l.Extra {
			p.str(a.Name.Space)
			p.str(a.Name.Local)
			p.str(a.Value)
		}
	}
}

// unpackLinks reads the links of a pack as either form keeps them: the
// packed one against b, or the JSON of schemas 9 to 13. The strings of a
// packed link but its href are substrings of s.
func unpackLinks(s string, b *linkBase) ([]resourcesync.Link, error) {
	switch {
	case s == "":
		return nil, nil
	case s[0] == '[':
		return decodeLinks(s)
	case s[0] != linksPacked:
		return nil, fmt.Errorf("links of unknown form %#x: %w", s[0], errPack)
	}
	u := unpacker{s: s, i: 1}
	n := u.uvarint()
	if u.err != nil || n == 0 || n > uint64(len(s)) {
		return nil, fmt.Errorf("links: %w", errPack)
	}
	out := make([]resourcesync.Link, n)
	for i := range out {
		if err := u.link(&out[i], b); err != nil {
			return nil, err
		}
	}
	if u.i != len(u.s) {
		return nil, fmt.Errorf("links: %d bytes after the last: %w", len(u.s)-u.i, errPack)
	}
	return out, nil
}

func (u *unpacker) link(l *resourcesync.Link, b *linkBase) error {
	if u.i >= len(u.s) {
		return fmt.Errorf("link: %w", errPack)
	}
	r := int(u.s[u.i])
	u.i++
	switch {
	case r == 0:
		l.Rel = u.str()
	case r < len(linkRels):
		l.Rel = linkRels[r]
	default:
		return fmt.Errorf("link: unknown relation %d: %w", r, errPack)
	}
	f := u.uvarint()
	if u.err != nil || f&^linkFlags != 0 {
		return fmt.Errorf("link: flags: %w", errPack)
	}
	if f&linkHref != 0 {
		n := u.uvarint()
		rest := u.str()
		if u.err != nil || n > uint64(len(b.uri)) {
			return fmt.Errorf("link: href: %w", errPack)
		}
		l.Href = rest
		if n > 0 {
			l.Href = b.uri[:n] + rest
		}
	}
	if (f&linkModifiedUp != 0 && b.modified.IsZero()) || (f&linkHashUp != 0 && len(b.hash) == 0) ||
		(f&linkLengthUp != 0 && b.length == nil) || (f&linkTypeUp != 0 && b.typ == "") {
		return fmt.Errorf("link: a field marked as the Source's, which has none: %w", errPack)
	}
	switch {
	case f&linkModifiedUp != 0:
		l.Modified = b.modified
	case f&linkModified != 0:
		l.Modified = u.time()
	}
	switch {
	case f&linkHashUp != 0:
		// A copy: the decoder reuses the Source's hash from row to row.
		l.Hash = slices.Clone(b.hash)
	case f&linkHash != 0:
		n := u.uvarint()
		if u.err != nil || n > uint64(len(u.s)-u.i) {
			return fmt.Errorf("link: hash: %w", errPack)
		}
		l.Hash = make(resourcesync.Hashes, n)
		for i := range l.Hash {
			l.Hash[i] = resourcesync.Hash{Alg: u.str(), Value: u.str()}
		}
	}
	switch {
	case f&linkLengthUp != 0:
		n := *b.length
		l.Length = &n
	case f&linkLength != 0:
		n := u.int()
		l.Length = &n
	}
	switch {
	case f&linkTypeUp != 0:
		l.Type = b.typ
	case f&linkType != 0:
		l.Type = u.coded(mediaCodes)
	}
	if f&linkEncoding != 0 {
		l.Encoding = u.str()
	}
	if f&linkPath != 0 {
		l.Path = u.str()
	}
	if f&linkPri != 0 {
		l.Pri = int(u.int())
	}
	if f&linkExtra != 0 {
		n := u.uvarint()
		if u.err != nil || n > uint64(len(u.s)-u.i) {
			return fmt.Errorf("link: attributes: %w", errPack)
		}
		l.Extra = make([]xml.Attr, n)
		for i := range l.Extra {
			l.Extra[i] = xml.Attr{Name: xml.Name{Space: u.str(), Local: u.str()}, Value: u.str()}
		}
	}
	if u.err != nil {
		return fmt.Errorf("link: %w", errPack)
	}
	return nil
}

// samePackedTime reports whether a and b pack to the same bytes: the same
// instant at the same offset from UTC.
func samePackedTime(a, b time.Time) bool {
	_, ao := a.Zone()
	_, bo := b.Zone()
	return a.Equal(b) && ao == bo
}

// sharedPrefix is the length of the longest common prefix of a and b.
func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
