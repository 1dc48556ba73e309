package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// repackPage is how many rows Repack reads and rewrites in one
// transaction: the WAL holds one page's rows at a time, not the table's.
const repackPage = 5000

// RepackResult counts what Repack read and rewrote.
type RepackResult struct {
	Resources, ResourcesRewritten int64
	Changes, ChangesRewritten     int64
}

// RepackProgress is Repack's report, once a page.
type RepackProgress struct {
	Table         string // "resources" or "changes"
	Read, Written int64
	Elapsed       time.Duration
}

// Repack rewrites, in the forms the applier writes, every row of the
// catalog at path written in an older one: rows written before schema 14
// keep their links as JSON and their ops and media types written out
// (schemaV14), until the resource changes again, which most of a
// repository's never do. It decodes each row and packs it again, so a
// row reads the same after; a row already in the current forms is left
// as it is. It runs a page of rows at a time, each page its own
// transaction, so it can be stopped and run again. The node must be
// stopped. The pages the rows no longer fill are reused as the catalog
// grows; VACUUM gives them back to the file system.
func Repack(ctx context.Context, path string, log *slog.Logger, progress func(RepackProgress)) (RepackResult, error) {
	return repack(ctx, path, log, progress, repackPage)
}

// repack is Repack, page rows at a time.
func repack(ctx context.Context, path string, log *slog.Logger, progress func(RepackProgress), page int) (RepackResult, error) {
	var res RepackResult
	c, err := Open(ctx, path, log)
	if err != nil {
		return res, err
	}
	defer c.Close()
	begun := time.Now()
	report := func(table string, read, written int64) {
		if progress != nil {
			progress(RepackProgress{Table: table, Read: read, Written: written, Elapsed: time.Since(begun)})
		}
	}
	if err := c.repackResources(ctx, page, &res, report); err != nil {
		return res, err
	}
	if err := c.repackChanges(ctx, page, &res, report); err != nil {
		return res, err
	}
	return res, nil
}

// Vacuum gives the pages of the catalog at path that no row fills back
// to the file system (SQLite's VACUUM, which writes the catalog anew
// beside itself), and returns the file's size before and after. The node
// must be stopped.
func Vacuum(ctx context.Context, path string, log *slog.Logger) (before, after int64, err error) {
	c, err := Open(ctx, path, log)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	if before, err = fileSize(path); err != nil {
		return 0, 0, err
	}
	if _, err := c.writer.ExecContext(ctx, `VACUUM`); err != nil {
		return before, 0, fmt.Errorf("vacuum catalog %s: %w", path, err)
	}
	if _, err := c.TruncateWAL(ctx); err != nil {
		return before, 0, err
	}
	after, err = fileSize(path)
	return before, after, err
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// packedPage is a page of rows read for Repack: each row's key, its
// packs and URI as the decoders read them, and its packs as stored.
type packedPage struct {
	coll []string
	seq  []int64
	row  []string
	old  []string
}

// readPacked reads a page of q's rows: the key (collection, or seq),
// the digests, the packs and URI, and the packs alone.
func readPacked(ctx context.Context, db *sql.DB, q string, args ...any) (packedPage, error) {
	var pg packedPage
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return pg, err
	}
	defer rows.Close()
	var r packedRow
	for rows.Next() {
		var coll string
		var seq int64
		var old []byte
		r.buf = r.buf[:0]
		if err := rows.Scan(&coll, &seq, packedDigest{&r}, packedDigest{&r}, packedRest{&r}, &old); err != nil {
			return pg, err
		}
		pg.coll, pg.seq = append(pg.coll, coll), append(pg.seq, seq)
		pg.row, pg.old = append(pg.row, string(r.buf)), append(pg.old, string(old))
	}
	return pg, rows.Err()
}

// repackPages rewrites a table a page of rows at a time, each page in a
// transaction of its own: next reads the page after the last row redo
// was given, and redo packs a row again and returns the statement that
// rewrites it, or "" for a row already in the current forms.
func (c *Catalog) repackPages(ctx context.Context, table string, next func() (packedPage, error),
	redo func(pg *packedPage, i int) (string, []any, error), read, written *int64, report func(string, int64, int64)) error {
	for {
		pg, err := next()
		if err != nil {
			return fmt.Errorf("repack %s: %w", table, err)
		}
		if len(pg.row) == 0 {
			report(table, *read, *written)
			return nil
		}
		err = c.write(ctx, func(tx *sql.Tx) error {
			for i := range pg.row {
				q, args, err := redo(&pg, i)
				if err != nil {
					return err
				}
				*read++
				if q == "" {
					continue
				}
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					return err
				}
				*written++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("repack %s: %w", table, err)
		}
		report(table, *read, *written)
	}
}

func (c *Catalog) repackResources(ctx context.Context, page int, res *RepackResult, report func(string, int64, int64)) error {
	var (
		d         packDecoder
		cp, up    = packer{codes: true}, packer{codes: true}
		coll, uri string
	)
	next := func() (packedPage, error) {
		return readPacked(ctx, c.writer, `SELECT collection, 0, `+digestCols("")+`, CAST(copy_pack || up_pack || uri AS TEXT),
			copy_pack || up_pack FROM resources WHERE (collection, uri) > (?, ?) ORDER BY collection, uri LIMIT ?`,
			coll, uri, page)
	}
	redo := func(pg *packedPage, i int) (string, []any, error) {
		var rs ResourceState
		if err := d.state(pg.row[i], &rs); err != nil {
			return "", nil, fmt.Errorf("resource of %s: %w", pg.coll[i], err)
		}
		r := &rs.Resource
		copyF := copyFacts{sha256: r.SHA256, md5: r.MD5, typ: r.Type, op: rs.Op, length: r.Length,
			changed: r.Changed.UnixMicro(), seq: int64(r.Seq)}
		u := newUpFacts(r.Source, r.Origin, r.URI, &r.Upstream)
		cp.reset()
		cp.packCopy(&copyF)
		up.reset()
		up.packUp(&u, r.URI, &copyF)
		coll, uri = pg.coll[i], r.URI
		if string(cp.b)+string(up.b) == pg.old[i] {
			return "", nil, nil
		}
		return `UPDATE resources SET copy_pack = ?, up_pack = ? WHERE collection = ? AND uri = ?`,
			[]any{cp.b, up.b, coll, uri}, nil
	}
	return c.repackPages(ctx, "resources", next, redo, &res.Resources, &res.ResourcesRewritten, report)
}

func (c *Catalog) repackChanges(ctx context.Context, page int, res *RepackResult, report func(string, int64, int64)) error {
	var (
		d   packDecoder
		p   = packer{codes: true}
		seq int64
	)
	next := func() (packedPage, error) {
		return readPacked(ctx, c.writer, `SELECT collection, seq, `+digestCols("")+`, CAST(pack || uri AS TEXT), pack
			FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`, seq, page)
	}
	redo := func(pg *packedPage, i int) (string, []any, error) {
		var ch LoggedChange
		if err := d.logged(pg.row[i], &ch); err != nil {
			return "", nil, err
		}
		// The log keeps what the Source said but the origin.
		u := newUpFacts(ch.Source, "", ch.URI, &ch.Upstream)
		p.reset()
		p.packChange(&changeHead{seq: int64(ch.Seq), at: ch.At.UnixMicro(), received: ch.Received.UnixMicro(), op: ch.Op,
			upOp: ch.UpstreamOp, copy: copyFacts{sha256: ch.SHA256, md5: ch.MD5, typ: ch.Type, length: ch.Length}}, &u, true)
		seq = pg.seq[i]
		if string(p.b) == pg.old[i] {
			return "", nil, nil
		}
		return `UPDATE changes SET pack = ? WHERE seq = ?`, []any{p.b, seq}, nil
	}
	return c.repackPages(ctx, "changes", next, redo, &res.Changes, &res.ChangesRewritten, report)
}
