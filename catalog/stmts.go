package catalog

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
	appliedGet, appliedPut       *sql.Stmt
	collEnsure, collGet, collPut *sql.Stmt
	resLoad, resMeta             *sql.Stmt
	// resUpsert and changeAdd write one row each (see resUpsertSQL).
	resUpsert, changeAdd *sql.Stmt
}

// prepare prepares every statement of s on the writer pool.
func (s *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	type stmt struct {
		dst **sql.Stmt
		sql string
	}
	list := []stmt{
		{&s.appliedGet, `SELECT seq FROM applied WHERE id = 1`},
		{&s.appliedPut, `UPDATE applied SET seq = max(seq, ?) WHERE id = 1`},
		{&s.collEnsure, `INSERT OR IGNORE INTO collections (name) VALUES (?)`},
		{&s.collGet, `SELECT first_at, last_at, resources, bytes, changes FROM collections WHERE name = ?`},
		{&s.collPut, `UPDATE collections SET first_at = ?, last_at = ?, resources = ?, bytes = ?, changes = ? WHERE name = ?`},
		{&s.resLoad, loadSQL},
		{&s.resMeta, `UPDATE resources SET source = ?, via_origin = ?, hops = ?,
				up_pack = ?, est = ?, est_refs = ?, up_order = ?
			WHERE collection = ? AND uri = ?`},
		{&s.resUpsert, resUpsertSQL},
		{&s.changeAdd, changeAddSQL},
	}
	for _, p := range list {
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
	all := []*sql.Stmt{s.appliedGet, s.appliedPut, s.collEnsure, s.collGet, s.collPut, s.resLoad, s.resMeta,
		s.resUpsert, s.changeAdd}
	for _, st := range all {
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
	byMD5                 *sql.Stmt
	lookup                *sql.Stmt
}

// heldByMD5SQL finds the held copies of a Source by their md5
// (changes_md5, byMD5From), with the length and sha-256 given when they
// are not NULL and not empty; HeldByHash keeps the one changed last. It
// has no ORDER BY: SQLite's sorter cost more than the lookup itself, and
// there are seldom two answers.
var heldByMD5SQL = `SELECT r.uri, r.changed, ` + qualified(lookupCols) + byMD5From + `
	AND r.source = ?3 AND (?4 IS NULL OR r.length = ?4) AND (?5 = '' OR r.sha256 = ?5)`

// prepare prepares every statement of s on the reader pool.
func (s *readStmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&s.resource, `SELECT ` + resourceCols + ` FROM resources WHERE collection = ? AND uri = ?`},
		{&s.byMD5, heldByMD5SQL},
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
	for _, st := range []*sql.Stmt{s.resource, s.byMD5, s.lastApplied, s.lookup} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
