package catalog

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// The plain columns of resources and changes up to schema 8, which held
// every field apart from the packs, and which the migrations read: each
// list in the order of rowDecoder's scans.
const (
	plainResourceCols = `collection, uri, source, origin, deleted, sha256, md5, length, type, changed, seq,
	up_time, up_modified, up_hash, up_length, up_type, links`
	plainStateCols  = plainResourceCols + `, coalesce((SELECT op FROM changes WHERE changes.seq = resources.seq), '')`
	plainLoggedCols = `seq, collection, uri, op, at, received, sha256, md5, length, type,
	source, up_op, up_time, up_modified, up_hash, up_length, up_type, links`
)

// rowDecoder reads the plain columns of schemas 1 to 8 (see
// plainResourceCols) for the migrations. It reads the rows of one walk
// into values it reuses, so that a list of a million rows allocates
// little more than its strings. It keeps
// the last upstream times it parsed, since neighbouring rows (a baseline's
// resources, a burst of changes) often share them.
type rowDecoder struct {
	timeText, modText string
	time, mod         time.Time
	hashes            resourcesync.Hashes
	upLength          int64
	// scratch columns
	deleted                   bool
	changed, seq, at, rcv     int64
	upTime, upMod, upHash, ty string
	upLen                     sql.NullInt64
	links                     sql.NullString
}

// state reads one row of plainStateCols into rs.
func (d *rowDecoder) state(s scanner, rs *ResourceState) error {
	r := &rs.Resource
	err := s.Scan(&r.Collection, &r.URI, &r.Source, &r.Origin, &d.deleted, hexDigest{&r.SHA256}, hexDigest{&r.MD5}, &r.Length, &r.Type,
		&d.changed, &d.seq, &d.upTime, &d.upMod, &d.upHash, &d.upLen, &d.ty, &d.links, &rs.Op)
	if err != nil {
		return err
	}
	r.Deleted, r.Changed, r.Seq = d.deleted, time.UnixMicro(d.changed).UTC(), uint64(d.seq)
	if err := d.upstream(&r.Upstream); err != nil {
		return fmt.Errorf("resource %s: %w", r.URI, err)
	}
	return nil
}

// logged reads one row of plainLoggedCols into ch.
func (d *rowDecoder) logged(s scanner, ch *LoggedChange) error {
	err := s.Scan(&d.seq, &ch.Collection, &ch.URI, &ch.Op, &d.at, &d.rcv, hexDigest{&ch.SHA256}, hexDigest{&ch.MD5}, &ch.Length, &ch.Type,
		&ch.Source, &ch.UpstreamOp, &d.upTime, &d.upMod, &d.upHash, &d.upLen, &d.ty, &d.links)
	if err != nil {
		return err
	}
	ch.Seq, ch.At, ch.Received = uint64(d.seq), time.UnixMicro(d.at).UTC(), time.UnixMicro(d.rcv).UTC()
	if err := d.upstream(&ch.Upstream); err != nil {
		return fmt.Errorf("change %d of %s: %w", ch.Seq, ch.URI, err)
	}
	return nil
}

// upstream fills u from the scratch upstream columns, reusing the
// decoder's hash slice and length.
func (d *rowDecoder) upstream(u *Upstream) error {
	var err error
	if d.upTime != d.timeText {
		if d.time, err = parseTime(d.upTime); err != nil {
			return fmt.Errorf("upstream time: %w", err)
		}
		d.timeText = d.upTime
	}
	if d.upMod != d.modText {
		if d.mod, err = parseTime(d.upMod); err != nil {
			return fmt.Errorf("upstream modified: %w", err)
		}
		d.modText = d.upMod
	}
	u.Time, u.Modified = d.time, d.mod
	d.hashes = appendHashes(d.hashes[:0], d.upHash)
	u.Hash = d.hashes
	if len(u.Hash) == 0 {
		u.Hash = nil
	}
	u.Length = nil
	if d.upLen.Valid {
		d.upLength = d.upLen.Int64
		u.Length = &d.upLength
	}
	u.Type = d.ty
	u.Links = nil
	if d.links.Valid {
		if err := json.Unmarshal([]byte(d.links.String), &u.Links); err != nil {
			return fmt.Errorf("upstream links: %w", err)
		}
	}
	return nil
}

// appendHashes is splitHashes appending to dst.
func appendHashes(dst resourcesync.Hashes, s string) resourcesync.Hashes {
	for s != "" {
		var f string
		f, s, _ = strings.Cut(s, " ")
		if f == "" {
			continue
		}
		alg, val, _ := strings.Cut(f, ":")
		dst = append(dst, resourcesync.Hash{Alg: alg, Value: val})
	}
	return dst
}
