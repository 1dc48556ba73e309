package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaV9 keeps each fact of a resource and of a change once.
//
// Up to schema 8 a resource row held the Source's word twice, in plain
// columns (up_time, up_modified, up_hash, up_length, up_type, links) and
// again in up_pack, and a change-log row held it twice likewise; the
// chain of hops repeated the URI, times, hashes and length once more,
// and the origin column repeated the URI of every resource harvested from
// its origin. Measured on a baseline of a repository (BenchmarkCatalogSize:
// URIs of 80 bytes, both digests, a describedby link, a via link on one
// resource in ten), a resource row was 2,246 bytes and a change 1,414, a
// catalog 5,180 bytes a resource in all.
//
// From this step the packs are the record of the Source's word: the
// plain columns left are those SQL reads (keys, indexes, the conditions
// of lists, retention and the blob references). The hops column is NULL
// where hopsOf derives the chain from the row, origin is computed from
// via_origin, links are encoded without their empty fields (links.go), and
// a change's pack leaves out its URI, which the reads append. Each
// column's comment says what reads it. fillV9 moves every row over, a page
// at a time, rebuilding the packs from the plain columns of schema 8 and
// checking that a NULL hops derives the chain the row held.
const schemaV9 = `
CREATE TABLE resources_v9 (
	-- The key: a collection's resources are walked by URI (lists, the
	-- harvester's comparisons), and a row is found by both.
	collection TEXT NOT NULL REFERENCES collections (name),
	uri        TEXT NOT NULL,
	-- The Source harvested from: resources_md5 looks copies up per Source,
	-- and walkSource keeps a Source's rows of a shared collection.
	source     TEXT NOT NULL,
	-- 1 once the copy is deleted (or for a tombstone): every list and
	-- count asks for held rows, resources_held holds only those.
	deleted    INTEGER NOT NULL DEFAULT 0,
	-- The copy held (or last held): sha256 is its blob's key (BlobRefs,
	-- fixity), md5 the key of resources_md5 (HeldByHash), length and
	-- type what the applier compares an event with and what the
	-- collection's byte total is kept from. Also in copy_pack.
	sha256     TEXT NOT NULL,
	md5        TEXT NOT NULL,
	length     INTEGER NOT NULL,
	type       TEXT NOT NULL,
	-- The aggregator's time (µs) and EVENTS sequence of its last change
	-- to the copy: seq names that change in the change log (0 for a
	-- tombstone, see heldOnce) and bounds a snapshot's walk; changed
	-- orders HeldByHash's answers and ages tombstones for retention.
	changed    INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	-- The origin's URI when it is not uri (a resource reached through
	-- another aggregator's via link), else NULL; origin is what the
	-- lookups by origin read, resources_origin indexes it.
	via_origin TEXT,
	origin     TEXT GENERATED ALWAYS AS (coalesce(via_origin, uri)) VIRTUAL,
	-- The Source time that places the last statement applied (order.go),
	-- compared with every event of the resource before it applies.
	up_order   TEXT NOT NULL,
	-- The chain of hops as JSON when hopsOf cannot derive it from the row
	-- (an upstream URI that is not uri), else NULL.
	hops       TEXT,
	-- The packs the streaming reads decode (pack.go): copy_pack the copy
	-- and its change's op, up_pack the Source's word, its only record.
	copy_pack  BLOB NOT NULL,
	up_pack    BLOB NOT NULL,
	-- The size bounds of the row's Resource List entry (SizeHint), summed
	-- over a part by resources_held.
	est        INTEGER NOT NULL DEFAULT 0,
	est_refs   INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (collection, uri)
) WITHOUT ROWID;

CREATE TABLE changes_v9 (
	-- The EVENTS sequence of the change: the log's order, and what
	-- resources.seq and prev name.
	seq        INTEGER PRIMARY KEY,
	-- The collection and URI changed: Change Lists are per collection,
	-- retention and the snapshots walk a collection's changes by URI.
	collection TEXT NOT NULL REFERENCES collections (name),
	uri        TEXT NOT NULL,
	-- The aggregator's op: retention removes a deleted resource with its
	-- deletion, a snapshot skips what was deleted at it.
	op         TEXT NOT NULL CHECK (op IN ('created', 'updated', 'deleted')),
	-- The change's time (µs), strictly increasing per collection, by
	-- which Change Lists are cut; received is the stream time it was
	-- adjusted from.
	at         INTEGER NOT NULL,
	received   INTEGER NOT NULL,
	-- The copy the change names, read by Changes and BlobRefs (a Change
	-- Dump packages it). Also in pack.
	sha256     TEXT NOT NULL,
	md5        TEXT NOT NULL,
	length     INTEGER NOT NULL,
	type       TEXT NOT NULL,
	-- The resource's change before this one (0 for its first): what a
	-- snapshot at an older sequence lists, and what retention removes.
	prev       INTEGER NOT NULL DEFAULT 0,
	-- The whole change but its collection and URI, with what the Source
	-- said of it, its only record (pack.go): ScanChanges reads pack || uri.
	pack       BLOB NOT NULL,
	UNIQUE (collection, at)
);
`

// schemaV9Swap replaces the tables of schema 8 with those fillV9 filled,
// and makes their indexes: the same as before (schemas 3, 7 and 8).
const schemaV9Swap = `
DROP TABLE resources;
DROP TABLE changes;
ALTER TABLE resources_v9 RENAME TO resources;
ALTER TABLE changes_v9 RENAME TO changes;
CREATE INDEX resources_md5 ON resources (source, md5);
CREATE INDEX resources_held ON resources (collection, uri, est, est_refs, deleted) WHERE deleted = 0;
CREATE INDEX resources_origin ON resources (origin) WHERE origin <> uri;
CREATE INDEX changes_collection_seq ON changes (collection, seq);
`

// fillV9 copies every row of schema 8 into the tables of schema 9, a page
// at a time by key, inside the migration's transaction, then swaps them.
func fillV9(ctx context.Context, tx *sql.Tx) error {
	if err := fillResourcesV9(ctx, tx); err != nil {
		return err
	}
	if err := fillChangesV9(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, schemaV9Swap); err != nil {
		return fmt.Errorf("replace the tables: %w", err)
	}
	return nil
}

// v8Row is a resource row of schema 8 with what fillV9 copies as it is.
type v8Row struct {
	rs           ResourceState
	hops         string
	copyPack     []byte
	est, estRefs int64
	upOrder      string
	changed      int64
}

func fillResourcesV9(ctx context.Context, tx *sql.Tx) error {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO resources_v9 (collection, uri, source, deleted, sha256, md5, length, type,
		changed, seq, via_origin, up_order, hops, copy_pack, up_pack, est, est_refs) VALUES (`+placeholders(17, 1)+`)`)
	if err != nil {
		return fmt.Errorf("copy resources: %w", err)
	}
	defer ins.Close()
	var p, q packer
	coll, uri := "", ""
	for {
		rows, err := tx.QueryContext(ctx, `SELECT `+plainStateCols+`, hops, copy_pack, est, est_refs, up_order, changed
			FROM resources WHERE (collection, uri) > (?, ?) ORDER BY collection, uri LIMIT ?`, coll, uri, fillPage)
		if err != nil {
			return fmt.Errorf("read resources: %w", err)
		}
		var page []*v8Row
		for rows.Next() {
			var d rowDecoder
			r := &v8Row{}
			if err := d.state(&extraScanner{s: rows, extra: []any{&r.hops, &r.copyPack, &r.est, &r.estRefs, &r.upOrder, &r.changed}}, &r.rs); err != nil {
				rows.Close()
				return fmt.Errorf("read resources: %w", err)
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read resources: %w", err)
		}
		for _, row := range page {
			r := &row.rs.Resource
			up, err := upFactsOf(r.Source, r.Origin, &r.Upstream)
			if err != nil {
				return fmt.Errorf("resource %s: %w", r.URI, err)
			}
			q.reset()
			q.packUp(&up, r.URI, nil)
			hops := sql.NullString{String: row.hops, Valid: true}
			if derived, err := hopsOf(r.URI, string(q.b), "", "", ""); err == nil && derived == row.hops {
				hops.Valid = false
			}
			copyPack := row.copyPack
			if copyPack == nil {
				p.reset()
				p.packCopyV9(&copyFacts{sha256: r.SHA256, md5: r.MD5, typ: r.Type, op: row.rs.Op, length: r.Length,
					changed: row.changed, seq: int64(r.Seq)})
				copyPack = p.b
			}
			via := sql.NullString{String: r.Origin, Valid: r.Origin != r.URI}
			deleted := 0
			if r.Deleted {
				deleted = 1
			}
			_, err = ins.ExecContext(ctx, r.Collection, r.URI, r.Source, deleted, r.SHA256, r.MD5, r.Length, r.Type,
				row.changed, int64(r.Seq), via, row.upOrder, hops, copyPack, q.b, row.est, row.estRefs)
			if err != nil {
				return fmt.Errorf("copy resource %s: %w", r.URI, err)
			}
		}
		if len(page) < fillPage {
			return nil
		}
		last := &page[len(page)-1].rs
		coll, uri = last.Collection, last.URI
	}
}

func fillChangesV9(ctx context.Context, tx *sql.Tx) error {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO changes_v9 (seq, collection, uri, op, at, received, sha256, md5, length, type,
		prev, pack) VALUES (`+placeholders(12, 1)+`)`)
	if err != nil {
		return fmt.Errorf("copy change log: %w", err)
	}
	defer ins.Close()
	var p packer
	seq := int64(-1)
	for {
		rows, err := tx.QueryContext(ctx, `SELECT `+plainLoggedCols+`, prev FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, seq, fillPage)
		if err != nil {
			return fmt.Errorf("read change log: %w", err)
		}
		type v8Change struct {
			ch   LoggedChange
			prev int64
		}
		var page []*v8Change
		for rows.Next() {
			var d rowDecoder
			c := &v8Change{}
			if err := d.logged(&extraScanner{s: rows, extra: []any{&c.prev}}, &c.ch); err != nil {
				rows.Close()
				return fmt.Errorf("read change log: %w", err)
			}
			page = append(page, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read change log: %w", err)
		}
		for _, c := range page {
			ch := &c.ch
			up, err := upFactsOf(ch.Source, "", &ch.Upstream)
			if err != nil {
				return fmt.Errorf("change %d: %w", ch.Seq, err)
			}
			p.reset()
			p.packChangeV9(&changeHead{seq: int64(ch.Seq), at: ch.At.UnixMicro(), received: ch.Received.UnixMicro(),
				op: ch.Op, upOp: ch.UpstreamOp,
				copy: copyFacts{sha256: ch.SHA256, md5: ch.MD5, typ: ch.Type, length: ch.Length}}, &up)
			_, err = ins.ExecContext(ctx, int64(ch.Seq), ch.Collection, ch.URI, ch.Op, ch.At.UnixMicro(), ch.Received.UnixMicro(),
				ch.SHA256, ch.MD5, ch.Length, ch.Type, c.prev, p.b)
			if err != nil {
				return fmt.Errorf("copy change %d: %w", ch.Seq, err)
			}
		}
		if len(page) < fillPage {
			return nil
		}
		seq = int64(page[len(page)-1].ch.Seq)
	}
}

// extraScanner scans a row whose first columns a rowDecoder reads and
// whose last ones are extra.
type extraScanner struct {
	s     scanner
	extra []any
}

func (e *extraScanner) Scan(dst ...any) error { return e.s.Scan(append(dst, e.extra...)...) }
