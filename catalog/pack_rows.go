package catalog

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// copyFacts is what copy_pack holds.
type copyFacts struct {
	sha256, md5, typ, op string
	length               int64
	changed              int64 // µs since the epoch, as the changed column
	seq                  int64
}

// packCopy appends the copy_pack of c.
func (p *packer) packCopy(c *copyFacts) {
	p.str(c.sha256)
	p.str(c.md5)
	p.int(c.length)
	p.str(c.typ)
	p.int(c.changed)
	p.int(c.seq)
	p.str(c.op)
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

// packUp appends the up_pack of u, for a row whose URI is uri: an origin
// that is the URI (a resource harvested from its origin, or a change-log
// row, whose pack has no origin: uri and origin both "") is one byte.
func (p *packer) packUp(u *upFacts, uri string) {
	p.str(u.source)
	if u.origin == uri {
		p.b = append(p.b, 0)
	} else {
		p.b = append(p.b, 1)
		p.str(u.origin)
	}
	p.time(u.time)
	p.time(u.modified)
	p.str(u.hash)
	if u.length.Valid {
		p.b = append(p.b, 1)
		p.int(u.length.Int64)
	} else {
		p.b = append(p.b, 0)
	}
	p.str(u.typ)
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

// packChange appends the pack of a change-log row. The row's URI is not
// in it: the reads append the uri column (pack || uri), which
// packDecoder.logged takes as the rest.
func (p *packer) packChange(h *changeHead, u *upFacts) {
	p.int(h.seq)
	p.str(h.op)
	p.int(h.at)
	p.int(h.received)
	p.str(h.copy.sha256)
	p.str(h.copy.md5)
	p.int(h.copy.length)
	p.str(h.copy.typ)
	p.str(h.upOp)
	p.packUp(u, "")
}

// packDecoder turns packs back into the package's types, reusing its hash
// slice and length. The strings it fills are substrings of the pack. It
// keeps the upstream times it decoded last, with their packed text, since
// neighbouring rows (a baseline's resources) often share them.
type packDecoder struct {
	hashText string
	hashes   resourcesync.Hashes
	upLength int64
	upTime   packedTime
	upMod    packedTime
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
// read as one string: copy_pack || up_pack || uri. The two packs end
// where their last field does, so the rest of the row is the URI.
func (d *packDecoder) state(row string, rs *ResourceState) error {
	r := &rs.Resource
	u := unpacker{s: row}
	r.SHA256 = u.str()
	r.MD5 = u.str()
	r.Length = u.int()
	r.Type = u.str()
	r.Changed = time.UnixMicro(u.int()).UTC()
	r.Seq = uint64(u.int())
	rs.Op = u.str()
	r.Deleted = rs.Op == resourcesync.Deleted
	if u.err != nil {
		return fmt.Errorf("resource row: copy: %w", errPack)
	}
	atURI, err := d.upstream(&u, &r.Source, &r.Origin, &r.Upstream)
	r.URI = u.rest()
	if atURI {
		r.Origin = r.URI
	}
	if err != nil {
		return fmt.Errorf("resource %s: %w", r.URI, err)
	}
	return nil
}

// logged fills ch (but its Collection) from a change-log row read as
// one string: pack || uri.
func (d *packDecoder) logged(row string, ch *LoggedChange) error {
	u := unpacker{s: row}
	ch.Seq = uint64(u.int())
	ch.URI = ""
	ch.Op = u.str()
	ch.At = time.UnixMicro(u.int()).UTC()
	ch.Received = time.UnixMicro(u.int()).UTC()
	ch.SHA256 = u.str()
	ch.MD5 = u.str()
	ch.Length = u.int()
	ch.Type = u.str()
	ch.UpstreamOp = u.str()
	if u.err != nil {
		return fmt.Errorf("change %d: %w", ch.Seq, errPack)
	}
	var origin string
	_, err := d.upstream(&u, &ch.Source, &origin, &ch.Upstream)
	ch.URI = u.rest()
	if err != nil {
		return fmt.Errorf("change %d of %s: %w", ch.Seq, ch.URI, err)
	}
	return nil
}

// upstream reads the fields of an up_pack from u into source, origin and
// up, leaving u after them. atURI says the origin is the row's URI, which
// the caller then sets.
func (d *packDecoder) upstream(u *unpacker, source, origin *string, up *Upstream) (atURI bool, err error) {
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
	if len(hash) == 0 {
		up.Hash = nil
	} else {
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
	up.Type = u.str()
	up.Links = nil
	if u.flag() {
		links := u.str()
		if u.err == nil {
			if up.Links, err = decodeLinks(links); err != nil {
				return atURI, fmt.Errorf("upstream links: %w", err)
			}
		}
	}
	if u.err != nil {
		return atURI, fmt.Errorf("upstream: %w", errPack)
	}
	return atURI, nil
}

// decodeUp reads a resource's up_pack, read alone, into its source,
// origin and upstream: the reads of the package's other readers, which
// scan the row's columns.
func decodeUp(pack, uri string, source, origin *string, up *Upstream) error {
	var d packDecoder
	u := unpacker{s: pack}
	atURI, err := d.upstream(&u, source, origin, up)
	if atURI {
		*origin = uri
	}
	if err == nil && u.i != len(u.s) {
		err = fmt.Errorf("upstream: %w", errPack)
	}
	if err != nil {
		return err
	}
	return nil
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
