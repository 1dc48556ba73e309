package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// writeStmts are the statements of the apply path, prepared once on the
// writer connection: re-preparing them for every event would cost more
// than running them.
type writeStmts struct {
	appliedGet, appliedPut          *sql.Stmt
	collEnsure, collGet, collPut    *sql.Stmt
	resGet, resPut, resDel, resMeta *sql.Stmt
	resTomb, changeAdd              *sql.Stmt
}

// prepare prepares every statement of s on the writer pool.
func (s *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.appliedGet, `SELECT seq FROM applied WHERE id = 1`},
		{&s.appliedPut, `UPDATE applied SET seq = max(seq, ?) WHERE id = 1`},
		{&s.collEnsure, `INSERT OR IGNORE INTO collections (name) VALUES (?)`},
		{&s.collGet, `SELECT first_at, last_at, resources, bytes, changes FROM collections WHERE name = ?`},
		{&s.collPut, `UPDATE collections SET first_at = ?, last_at = ?, resources = ?, bytes = ?, changes = ? WHERE name = ?`},
		{&s.resGet, `SELECT deleted, sha256, length, type, md5, up_order FROM resources WHERE collection = ? AND uri = ?`},
		{&s.resPut, `INSERT INTO resources (collection, uri, source, deleted, sha256, md5, length, type,
				changed, seq, origin, up_time, up_modified, up_hash, up_length, up_type, links, hops,
				copy_pack, up_pack, est, est_refs, up_order)
			VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (collection, uri) DO UPDATE SET source = excluded.source, deleted = 0,
				sha256 = excluded.sha256, md5 = excluded.md5, length = excluded.length, type = excluded.type,
				changed = excluded.changed, seq = excluded.seq, origin = excluded.origin,
				up_time = excluded.up_time, up_modified = excluded.up_modified, up_hash = excluded.up_hash,
				up_length = excluded.up_length, up_type = excluded.up_type, links = excluded.links, hops = excluded.hops,
				copy_pack = excluded.copy_pack, up_pack = excluded.up_pack, est = excluded.est, est_refs = excluded.est_refs,
				up_order = excluded.up_order`},
		{&s.resDel, `UPDATE resources SET deleted = 1, changed = ?, seq = ?, source = ?, origin = ?,
				up_time = ?, up_modified = ?, up_hash = ?, up_length = ?, up_type = ?, links = ?, hops = ?,
				copy_pack = ?, up_pack = ?, est = ?, est_refs = ?, up_order = ?
			WHERE collection = ? AND uri = ?`},
		{&s.resMeta, `UPDATE resources SET source = ?, origin = ?,
				up_time = ?, up_modified = ?, up_hash = ?, up_length = ?, up_type = ?, links = ?, hops = ?,
				up_pack = ?, est = ?, est_refs = ?, up_order = ?
			WHERE collection = ? AND uri = ?`},
		{&s.resTomb, `INSERT INTO resources (collection, uri, source, deleted, sha256, md5, length, type,
				changed, seq, origin, up_time, up_modified, up_hash, up_length, up_type, links, hops,
				copy_pack, up_pack, est, est_refs, up_order)
			VALUES (?, ?, ?, 1, '', '', 0, '', 0, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?)`},
		{&s.changeAdd, `INSERT INTO changes (seq, collection, uri, op, at, received, sha256, md5, length, type,
				source, up_op, up_time, up_modified, up_hash, up_length, up_type, links, pack)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
	} {
		st, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	return nil
}

// close closes every prepared statement.
func (s *writeStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.appliedGet, s.appliedPut, s.collEnsure, s.collGet, s.collPut,
		s.resGet, s.resPut, s.resDel, s.resMeta, s.resTomb, s.changeAdd} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// readStmts are the hot reads of the fetch workers and the harvester,
// prepared once on the reader pool (database/sql prepares each on a
// connection the first time that connection runs it): preparing the
// query anew for every change cost more than running it.
type readStmts struct {
	resource, lastApplied *sql.Stmt
	bySHA256, byMD5       *sql.Stmt
	lookup                *sql.Stmt
}

// heldByHashSQL finds a held copy by one digest column; col is one of
// two constants, never input.
func heldByHashSQL(col string) string {
	return `SELECT ` + resourceCols + ` FROM resources
		WHERE source = ? AND ` + col + ` = ? AND deleted = 0 AND (?3 IS NULL OR length = ?3)
		ORDER BY changed DESC LIMIT 1`
}

// prepare prepares every statement of s on the reader pool.
func (s *readStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.resource, `SELECT ` + resourceCols + ` FROM resources WHERE collection = ? AND uri = ?`},
		{&s.bySHA256, heldByHashSQL("sha256")},
		{&s.byMD5, heldByHashSQL("md5")},
		{&s.lastApplied, `SELECT seq FROM applied WHERE id = 1`},
		{&s.lookup, lookupSQL},
	} {
		st, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	return nil
}

// close closes every prepared statement.
func (s *readStmts) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.resource, s.bySHA256, s.byMD5, s.lastApplied, s.lookup} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
