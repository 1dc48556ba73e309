package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaV10 keeps the copy's digests once and marks the Source's word
// where it repeats them.
//
// Up to schema 9 a resource row held its copy's digests three times: in
// the sha256 and md5 columns (which SQL reads: the blob references,
// HeldByHash), in copy_pack, and, when the Source declared them as most
// do, in up_pack as the Source's hash; its type three times likewise. A
// change-log row did the same. Measured on a static Source's baseline
// (BenchmarkCatalogSize) that was 1,388 bytes a resource with its change
// log. From this step the packs leave the digests out, and the streaming
// reads put the columns before the packs (packedRow), so the decoding
// is as before; the Source's hash and type, where they repeat the copy's,
// are a one-byte mark (hashMark, typeMark in pack_rows.go). The tables do
// not change; fillV10 packs every row again, a page at a time, and a
// build before this step cannot read the new packs, which the version
// says.
const schemaV10 = `SELECT 1`

// v10Page is how many rows fillV10 packs again at a time.
const v10Page = 1000

func fillV10(ctx context.Context, tx *sql.Tx) error {
	if err := markResources(ctx, tx); err != nil {
		return err
	}
	return markChanges(ctx, tx)
}

// markResources packs each resource's packs again: copy_pack without the
// digests its columns keep, up_pack marked against its copy.
func markResources(ctx context.Context, tx *sql.Tx) error {
	upd, err := tx.PrepareContext(ctx, `UPDATE resources SET copy_pack = ?, up_pack = ? WHERE collection = ? AND uri = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	type row struct{ coll, packs string }
	var (
		d         packDecoder
		p, q      packer
		coll, uri string
	)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT collection, copy_pack || up_pack || uri FROM resources
			WHERE (collection, uri) > (?, ?) ORDER BY collection, uri LIMIT ?`, coll, uri, v10Page)
		if err != nil {
			return fmt.Errorf("read resources: %w", err)
		}
		var page []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.coll, &r.packs); err != nil {
				rows.Close()
				return fmt.Errorf("read resources: %w", err)
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read resources: %w", err)
		}
		if len(page) == 0 {
			return nil
		}
		for _, r := range page {
			var rs ResourceState
			if err := d.state(r.packs, &rs); err != nil {
				return err
			}
			res := &rs.Resource
			up, err := upFactsOf(res.Source, res.Origin, &res.Upstream)
			if err != nil {
				return fmt.Errorf("resource %s: %w", res.URI, err)
			}
			c := copyFacts{sha256: res.SHA256, md5: res.MD5, typ: res.Type, op: rs.Op, length: res.Length,
				changed: res.Changed.UnixMicro(), seq: int64(res.Seq)}
			q.reset()
			q.packCopy(&c)
			p.reset()
			p.packUp(&up, res.URI, &c)
			if _, err := upd.ExecContext(ctx, q.b, p.b, r.coll, res.URI); err != nil {
				return fmt.Errorf("pack resource %s again: %w", res.URI, err)
			}
			coll, uri = r.coll, res.URI
		}
	}
}

// markChanges packs each change-log row's pack again, without the copy's
// digests its columns keep, marked against that copy.
func markChanges(ctx context.Context, tx *sql.Tx) error {
	upd, err := tx.PrepareContext(ctx, `UPDATE changes SET pack = ? WHERE seq = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	var (
		d   packDecoder
		p   packer
		seq int64
	)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT pack || uri FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, seq, v10Page)
		if err != nil {
			return fmt.Errorf("read change log: %w", err)
		}
		var page []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return fmt.Errorf("read change log: %w", err)
			}
			page = append(page, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read change log: %w", err)
		}
		if len(page) == 0 {
			return nil
		}
		for _, s := range page {
			var ch LoggedChange
			if err := d.loggedV9(s, &ch); err != nil {
				return err
			}
			up, err := upFactsOf(ch.Source, "", &ch.Upstream)
			if err != nil {
				return fmt.Errorf("change %d: %w", ch.Seq, err)
			}
			p.reset()
			p.packChange(&changeHead{seq: int64(ch.Seq), at: ch.At.UnixMicro(), received: ch.Received.UnixMicro(),
				op: ch.Op, upOp: ch.UpstreamOp,
				copy: copyFacts{sha256: ch.SHA256, md5: ch.MD5, typ: ch.Type, length: ch.Length}}, &up, true)
			if _, err := upd.ExecContext(ctx, p.b, int64(ch.Seq)); err != nil {
				return fmt.Errorf("pack change %d again: %w", ch.Seq, err)
			}
			seq = int64(ch.Seq)
		}
	}
}
