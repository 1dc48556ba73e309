package catalog

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/viaduct-mirror/viaduct"
)

// schemaV3 adds the packed columns of the streaming reads (see pack.go)
// and the size bounds of Resource List parts (see SizeHint), with an index
// of the held resources narrow enough to sum those bounds over a part
// without touching the rows (deleted is in it only so that SQLite sees
// it covers the query). fillV3 then packs the rows already there.
const schemaV3 = `
ALTER TABLE resources ADD COLUMN copy_pack BLOB;
ALTER TABLE resources ADD COLUMN up_pack   BLOB;
ALTER TABLE resources ADD COLUMN est       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE resources ADD COLUMN est_refs  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE changes   ADD COLUMN pack      BLOB;
CREATE INDEX resources_held ON resources (collection, uri, est, est_refs, deleted) WHERE deleted = 0;
`

// fillPage is how many rows fillV3 reads at a time.
const fillPage = 1000

// fillV3 packs every row written before schema v3, a page at a time by
// key, inside the migration's transaction.
func fillV3(ctx context.Context, tx *sql.Tx) error {
	var p, q packer
	coll, uri := "", ""
	for {
		rows, err := tx.QueryContext(ctx, `SELECT `+plainStateCols+` FROM resources
			WHERE (collection, uri) > (?, ?) ORDER BY collection, uri LIMIT ?`, coll, uri, fillPage)
		if err != nil {
			return fmt.Errorf("read resources: %w", err)
		}
		var page []*ResourceState
		for rows.Next() {
			var d rowDecoder
			rs := &ResourceState{}
			if err := d.state(rows, rs); err != nil {
				rows.Close()
				return fmt.Errorf("read resources: %w", err)
			}
			page = append(page, rs)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read resources: %w", err)
		}
		for _, rs := range page {
			r := &rs.Resource
			p.reset()
			p.packCopyV9(&copyFacts{sha256: r.SHA256, md5: r.MD5, typ: r.Type, op: rs.Op, length: r.Length,
				changed: r.Changed.UnixMicro(), seq: int64(r.Seq)})
			up, err := upFactsOf(r.Source, r.Origin, &r.Upstream)
			if err != nil {
				return fmt.Errorf("resource %s: %w", r.URI, err)
			}
			q.reset()
			q.packUp(&up, r.URI, nil)
			fixed, refs := SizeHint(r.Type, upstreamChange(r))
			_, err = tx.ExecContext(ctx, `UPDATE resources SET copy_pack = ?, up_pack = ?, est = ?, est_refs = ?
				WHERE collection = ? AND uri = ?`, p.b, q.b, fixed, refs, r.Collection, r.URI)
			if err != nil {
				return fmt.Errorf("pack resource %s: %w", r.URI, err)
			}
		}
		if len(page) < fillPage {
			break
		}
		coll, uri = page[len(page)-1].Collection, page[len(page)-1].URI
	}
	seq := int64(-1)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT `+plainLoggedCols+` FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, seq, fillPage)
		if err != nil {
			return fmt.Errorf("read change log: %w", err)
		}
		var page []*LoggedChange
		for rows.Next() {
			var d rowDecoder
			ch := &LoggedChange{}
			if err := d.logged(rows, ch); err != nil {
				rows.Close()
				return fmt.Errorf("read change log: %w", err)
			}
			page = append(page, ch)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read change log: %w", err)
		}
		for _, ch := range page {
			up, err := upFactsOf(ch.Source, "", &ch.Upstream)
			if err != nil {
				return fmt.Errorf("change %d: %w", ch.Seq, err)
			}
			p.reset()
			p.packChangeV9(&changeHead{seq: int64(ch.Seq), at: ch.At.UnixMicro(), received: ch.Received.UnixMicro(),
				op: ch.Op, upOp: ch.UpstreamOp,
				copy: copyFacts{sha256: ch.SHA256, md5: ch.MD5, typ: ch.Type, length: ch.Length}}, &up)
			if _, err := tx.ExecContext(ctx, `UPDATE changes SET pack = ? WHERE seq = ?`, p.b, int64(ch.Seq)); err != nil {
				return fmt.Errorf("pack change %d: %w", ch.Seq, err)
			}
		}
		if len(page) < fillPage {
			return nil
		}
		seq = int64(page[len(page)-1].Seq)
	}
}

// upFactsOf is what up_pack holds of an Upstream read back from the
// plain columns.
func upFactsOf(source, origin string, up *Upstream) (upFacts, error) {
	u := upFacts{source: source, origin: origin, time: up.Time, modified: up.Modified,
		hash: up.Hash.String(), typ: up.Type}
	if up.Length != nil {
		u.length = sql.NullInt64{Int64: *up.Length, Valid: true}
	}
	links, err := encodeLinks(up.Links)
	if err != nil {
		return u, err
	}
	u.links = links
	return u, nil
}

// upstreamChange is the part of a viaduct.Change that SizeHint reads,
// rebuilt from a resource row.
func upstreamChange(r *Resource) *viaduct.Change {
	return &viaduct.Change{URI: r.URI, Modified: r.Upstream.Modified, Hash: r.Upstream.Hash,
		Length: r.Upstream.Length, Type: r.Upstream.Type, Links: r.Upstream.Links}
}
