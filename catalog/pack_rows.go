package catalog

import (
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// copyFacts is what copy_pack holds, with the digests the row keeps in
// its sha256 and md5 columns.
type copyFacts struct {
	sha256, md5, typ, op string
	length               int64
	changed              int64 // µs since the epoch, as the changed column
	seq                  int64
}

// digestCols is what the streaming reads select before a row's packs,
// of the row named by alias ("" for the table itself): its sha256 and
// md5 columns as they are stored, bytes or text (schema 12). The packs
// need not hold them again (schema 10); packedRow puts them before the
// packs, each as a packed string of its hex, and the reads decode the
// result as if the pack began with them. SQLite's hex() and the
// concatenation of a row's text in SQL cost more than reading the row
// did: about 1.2 of the 1.6 µs SQLite spent on a change-log row.
func digestCols(alias string) string {
	if alias != "" {
		alias += "."
	}
	return alias + "sha256, " + alias + "md5"
}

// packedRow scans a row of a streaming read (digestCols, then the packs
// and URI as one value) into the one string the decoders read:
// digests || packs || uri, each digest a packed string of its hex (a
// digest kept as text as it is).
type packedRow struct{ buf []byte }

// scan reads the row rows is at and returns it as one string.
func (r *packedRow) scan(rows *sql.Rows) (string, error) {
	r.buf = r.buf[:0]
	if err := rows.Scan(packedDigest{r}, packedDigest{r}, packedRest{r}); err != nil {
		return "", err
	}
	return string(r.buf), nil
}

// packedDigest appends a digest column to its row as a packed string.
type packedDigest struct{ r *packedRow }

func (d packedDigest) Scan(v any) error {
	switch v := v.(type) {
	case []byte:
		d.r.buf = binary.AppendUvarint(d.r.buf, uint64(2*len(v)))
		d.r.buf = hex.AppendEncode(d.r.buf, v)
	case string:
		d.r.buf = binary.AppendUvarint(d.r.buf, uint64(len(v)))
		d.r.buf = append(d.r.buf, v...)
	case nil:
		d.r.buf = append(d.r.buf, 0)
	default:
		return fmt.Errorf("a digest column holds a %T", v)
	}
	return nil
}

// packedRest appends the packs and URI to their row as they are.
type packedRest struct{ r *packedRow }

func (p packedRest) Scan(v any) error {
	switch v := v.(type) {
	case []byte:
		p.r.buf = append(p.r.buf, v...)
	case string:
		p.r.buf = append(p.r.buf, v...)
	default:
		return fmt.Errorf("a packed row holds a %T", v)
	}
	return nil
}

// digests appends sha256 and md5 as packedRow renders them.
func (p *packer) digests(sha256, md5 string) {
	p.str(sha256)
	p.str(md5)
}

// packCopy appends the copy_pack of c: length, type, changed, seq and the
// op of that change; its digests are the row's columns (packedRow).
func (p *packer) packCopy(c *copyFacts) {
	p.int(c.length)
	p.coded(c.typ, mediaCodes)
	p.int(c.changed)
	p.int(c.seq)
	p.coded(c.op, opCodes)
}

// packCopyV9 appends a copy_pack as schemas 3 to 9 kept it, the digests
// first: what the migrations up to 9 write.
func (p *packer) packCopyV9(c *copyFacts) {
	p.digests(c.sha256, c.md5)
	p.packCopy(c)
}

// upFacts is what up_pack holds: the Source's word of a resource, with
// the times and length as values and the links as encodeLinks writes
// them ("" for none).
type upFacts struct {
	source, origin string
	time, modified time.Time
	hash           string
	length         sql.NullInt64
	typ            string
	links          string
}

// Marks written in place of the Source's hash and type where they repeat
// the copy of the same row (schema 10): a Source that declares the
// digests it serves, as most do, would otherwise have them kept twice in
// each pack, about 110 bytes, and its type again. A mark is one byte,
// which no hash or type written out can be; the codes of media types
// (codes.go) are the bytes after markType's. The copy a mark refers to is
// the one the row holds with it: copy_pack and the plain columns beside
// up_pack, the pack's own copy facts in a change-log row.
const (
	markMD5SHA256 = "\x01" // md5:<the copy's md5> sha-256:<its sha-256>
	markSHA256MD5 = "\x02" // the same, sha-256 first
	markMD5       = "\x03" // md5 alone
	markSHA256    = "\x04" // sha-256 alone
	markType      = "\x01" // the copy's type
)

// hashMark is hash, or its mark when it names c's digests.
func hashMark(hash string, c *copyFacts) string {
	const md5, sha = resourcesync.MD5, resourcesync.SHA256
	switch {
	case c == nil:
	case c.md5 != "" && c.sha256 != "" && isDigestPair(hash, md5, c.md5, sha, c.sha256):
		return markMD5SHA256
	case c.md5 != "" && c.sha256 != "" && isDigestPair(hash, sha, c.sha256, md5, c.md5):
		return markSHA256MD5
	case c.md5 != "" && isDigest(hash, md5, c.md5):
		return markMD5
	case c.sha256 != "" && isDigest(hash, sha, c.sha256):
		return markSHA256
	}
	return hash
}

// isDigest reports whether s is alg:value.
func isDigest(s, alg, value string) bool {
	return len(s) == len(alg)+1+len(value) && s[:len(alg)] == alg && s[len(alg)] == ':' && s[len(alg)+1:] == value
}

// isDigestPair reports whether s is alg1:value1 alg2:value2.
func isDigestPair(s, alg1, value1, alg2, value2 string) bool {
	n := len(alg1) + 1 + len(value1)
	return len(s) > n && s[n] == ' ' && isDigest(s[:n], alg1, value1) && isDigest(s[n+1:], alg2, value2)
}

// typeMark is typ, or its mark when it is c's type.
func typeMark(typ string, c *copyFacts) string {
	if c != nil && c.typ != "" && typ == c.typ {
		return markType
	}
	return typ
}

// packUp appends the up_pack of u, for a row whose URI is uri and whose
// copy is c (nil: none to mark against): an origin that is the URI (a
// resource harvested from its origin, or a change-log row, whose pack
// has no origin: uri and origin both "") is one byte.
func (p *packer) packUp(u *upFacts, uri string, c *copyFacts) {
	p.str(u.source)
	if u.origin == uri {
		p.b = append(p.b, 0)
	} else {
		p.b = append(p.b, 1)
		p.str(u.origin)
	}
	p.time(u.time)
	p.time(u.modified)
	p.str(hashMark(u.hash, c))
	if u.length.Valid {
		p.b = append(p.b, 1)
		p.int(u.length.Int64)
	} else {
		p.b = append(p.b, 0)
	}
	if t := typeMark(u.typ, c); t == markType {
		p.str(t)
	} else {
		p.coded(t, mediaCodes)
	}
	if u.links != "" {
		p.b = append(p.b, 1)
		p.str(u.links)
	} else {
		p.b = append(p.b, 0)
	}
}

// changeHead is what a change-log pack holds before its upFacts.
type changeHead struct {
	seq, at, received int64
	op, upOp          string
	copy              copyFacts // op, changed and seq unused
}

// packChange appends the pack of a change-log row. Neither the row's
// URI nor its copy's digests are in it: the reads put the digests before
// it (packedRow) and the uri column after it (digests || pack || uri),
// which packDecoder.logged takes as the rest. With marks, the Source's
// hash and type are marked where they repeat h.copy's (schema 10 on).
func (p *packer) packChange(h *changeHead, u *upFacts, marks bool) {
	p.int(h.seq)
	p.coded(h.op, opCodes)
	p.int(h.at)
	p.int(h.received)
	p.int(h.copy.length)
	p.coded(h.copy.typ, mediaCodes)
	p.coded(h.upOp, opCodes)
	if marks {
		p.packUp(u, "", &h.copy)
	} else {
		p.packUp(u, "", nil)
	}
}

// packChangeV9 appends a change's pack as schemas 3 to 9 kept it, the
// copy's digests after the times and nothing marked: what the migrations
// up to 9 write.
func (p *packer) packChangeV9(h *changeHead, u *upFacts) {
	p.int(h.seq)
	p.str(h.op)
	p.int(h.at)
	p.int(h.received)
	p.digests(h.copy.sha256, h.copy.md5)
	p.int(h.copy.length)
	p.str(h.copy.typ)
	p.str(h.upOp)
	p.packUp(u, "", nil)
}

// packDecoder turns packs back into the package's types, reusing its hash
// slice and length. The strings it fills are substrings of the pack. It
// keeps the upstream times it decoded last, with their packed text, since
// neighbouring rows (a baseline's resources) often share them.
type packDecoder struct {
	hashText string
	hashes   resourcesync.Hashes
	marked   resourcesync.Hashes // a marked hash's, built afresh each row
	upLength int64
	upTime   packedTime
	upMod    packedTime
	links    string // the links upstream read, which readLinks decodes
}

// packedTime is a time and the packed text it was decoded from.
type packedTime struct {
	text string
	t    time.Time
}

// read decodes the next time of u, or takes the one kept when u starts
// with its packed text: a packed time is self-delimiting, so the same
// bytes are the same time.
func (p *packedTime) read(u *unpacker) time.Time {
	if n := len(p.text); n > 0 && len(u.s)-u.i >= n && u.s[u.i:u.i+n] == p.text {
		u.i += n
		return p.t
	}
	start := u.i
	t := u.time()
	if u.err != nil {
		return time.Time{}
	}
	p.text, p.t = u.s[start:u.i], t
	return t
}

// state fills rs (but its Collection) from a resource's packs and URI
// read as one string: digests || copy_pack || up_pack || uri
// (packedRow), which is also how schemas 3 to 9 kept copy_pack || up_pack
// || uri. The packs end where their last field does, so the rest of the
// row is the URI.
func (d *packDecoder) state(row string, rs *ResourceState) error {
	r := &rs.Resource
	u := unpacker{s: row}
	r.SHA256 = u.str()
	r.MD5 = u.str()
	r.Length = u.int()
	r.Type = u.coded(mediaCodes)
	r.Changed = time.UnixMicro(u.int()).UTC()
	r.Seq = uint64(u.int())
	rs.Op = u.coded(opCodes)
	r.Deleted = rs.Op == resourcesync.Deleted
	if u.err != nil {
		return fmt.Errorf("resource row: copy: %w", errPack)
	}
	atURI, err := d.upstream(&u, &r.Source, &r.Origin, &r.Upstream, r.SHA256, r.MD5, r.Type)
	r.URI = u.rest()
	if atURI {
		r.Origin = r.URI
	}
	if err == nil {
		err = d.readLinks(&r.Upstream, r.URI)
	}
	if err != nil {
		return fmt.Errorf("resource %s: %w", r.URI, err)
	}
	return nil
}

// logged fills ch (but its Collection) from a change-log row read as
// one string: digests || pack || uri (packedRow).
func (d *packDecoder) logged(row string, ch *LoggedChange) error {
	u := unpacker{s: row}
	ch.SHA256 = u.str()
	ch.MD5 = u.str()
	ch.Seq = uint64(u.int())
	ch.URI = ""
	ch.Op = u.coded(opCodes)
	ch.At = time.UnixMicro(u.int()).UTC()
	ch.Received = time.UnixMicro(u.int()).UTC()
	ch.Length = u.int()
	ch.Type = u.coded(mediaCodes)
	return d.loggedRest(&u, ch)
}

// loggedV9 is logged for a pack as schemas 3 to 9 wrote it (pack || uri):
// what the migration to 10 reads.
func (d *packDecoder) loggedV9(row string, ch *LoggedChange) error {
	u := unpacker{s: row}
	ch.Seq = uint64(u.int())
	ch.URI = ""
	ch.Op = u.coded(opCodes)
	ch.At = time.UnixMicro(u.int()).UTC()
	ch.Received = time.UnixMicro(u.int()).UTC()
	ch.SHA256 = u.str()
	ch.MD5 = u.str()
	ch.Length = u.int()
	ch.Type = u.coded(mediaCodes)
	return d.loggedRest(&u, ch)
}

// loggedRest reads what follows the copy's type in a change's pack: the
// Source's op and word, then the URI.
func (d *packDecoder) loggedRest(u *unpacker, ch *LoggedChange) error {
	ch.UpstreamOp = u.coded(opCodes)
	if u.err != nil {
		return fmt.Errorf("change %d: %w", ch.Seq, errPack)
	}
	var origin string
	_, err := d.upstream(u, &ch.Source, &origin, &ch.Upstream, ch.SHA256, ch.MD5, ch.Type)
	ch.URI = u.rest()
	if err == nil {
		err = d.readLinks(&ch.Upstream, ch.URI)
	}
	if err != nil {
		return fmt.Errorf("change %d of %s: %w", ch.Seq, ch.URI, err)
	}
	return nil
}

// upstream reads the fields of an up_pack from u into source, origin and
// up, leaving u after them; sha256, md5 and typ are the row's copy, which
// a mark names (hashMark, typeMark). atURI says the origin is the row's
// URI, which the caller then sets.
func (d *packDecoder) upstream(u *unpacker, source, origin *string, up *Upstream, sha256, md5, typ string) (atURI bool, err error) {
	*source = u.str()
	*origin = ""
	if u.flag() {
		*origin = u.str()
	} else {
		atURI = true
	}
	up.Time = d.upTime.read(u)
	up.Modified = d.upMod.read(u)
	hash := u.str()
	switch {
	case len(hash) == 0:
		up.Hash = nil
	case len(hash) == 1:
		if up.Hash, err = d.unmark(hash, sha256, md5); err != nil {
			return atURI, err
		}
	default:
		if hash != d.hashText {
			d.hashText = hash
			d.hashes = appendHashes(d.hashes[:0], d.hashText)
		}
		up.Hash = d.hashes
	}
	up.Length = nil
	if u.flag() {
		d.upLength = u.int()
		up.Length = &d.upLength
	}
	if up.Type = u.str(); up.Type == markType {
		if typ == "" {
			return atURI, fmt.Errorf("upstream type marked as the copy's, with no copy: %w", errPack)
		}
		up.Type = typ
	} else {
		up.Type = u.decode(up.Type, mediaCodes)
	}
	up.Links, d.links = nil, ""
	if u.flag() {
		d.links = u.str()
	}
	if u.err != nil {
		return atURI, fmt.Errorf("upstream: %w", errPack)
	}
	return atURI, nil
}

// readLinks decodes the links upstream left in d into up, for a row
// whose URI is uri: a packed link's href is kept against it.
func (d *packDecoder) readLinks(up *Upstream, uri string) error {
	if d.links == "" {
		return nil
	}
	links, err := unpackLinks(d.links, &linkBase{uri: uri, modified: up.Modified, hash: up.Hash, length: up.Length, typ: up.Type})
	if err != nil {
		return fmt.Errorf("upstream links: %w", err)
	}
	up.Links = links
	return nil
}

// unmark is the hash a mark names, of the copy's digests.
func (d *packDecoder) unmark(mark, sha256, md5 string) (resourcesync.Hashes, error) {
	h := d.marked[:0]
	md5h := resourcesync.Hash{Alg: resourcesync.MD5, Value: md5}
	shah := resourcesync.Hash{Alg: resourcesync.SHA256, Value: sha256}
	switch mark {
	case markMD5SHA256:
		h = append(h, md5h, shah)
	case markSHA256MD5:
		h = append(h, shah, md5h)
	case markMD5:
		h = append(h, md5h)
	case markSHA256:
		h = append(h, shah)
	default:
		return nil, fmt.Errorf("upstream hash: unknown mark %q: %w", mark, errPack)
	}
	for _, x := range h {
		if x.Value == "" {
			return nil, fmt.Errorf("upstream hash marked as the copy's %s, with no copy: %w", x.Alg, errPack)
		}
	}
	d.marked = h
	return h, nil
}

// decodeUp reads a resource's up_pack, read alone, into its source,
// origin and upstream: the reads of the package's other readers, which
// scan the row's columns, the copy's digests and type among them.
func decodeUp(pack, uri, sha256, md5, typ string, source, origin *string, up *Upstream) error {
	var d packDecoder
	u := unpacker{s: pack}
	atURI, err := d.upstream(&u, source, origin, up, sha256, md5, typ)
	if atURI {
		*origin = uri
	}
	if err == nil && u.i != len(u.s) {
		err = fmt.Errorf("upstream: %w", errPack)
	}
	if err == nil {
		err = d.readLinks(up, uri)
	}
	return err
}

// upTimes reads the Source's time and modified time from an up_pack,
// and nothing after them: what Lookup needs, without the links.
func upTimes(pack string) (tm, mod time.Time, err error) {
	u := unpacker{s: pack}
	u.str()
	if u.flag() {
		u.str()
	}
	tm = u.time()
	mod = u.time()
	if u.err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("upstream times: %w", errPack)
	}
	return tm, mod, nil
}
