package catalog

import (
	"database/sql"
	"fmt"
	"strings"
)

// Columns of the row writes, and the number of each (a row's arguments
// are appended in this order by flush and by the effects).
const (
	resCols = `collection, uri, source, deleted, sha256, md5, length, type,
		changed, seq, via_origin, hops, copy_pack, up_pack, est, est_refs, up_order`
	logCols = `seq, collection, uri, op, at, received, sha256, md5, length, type, pack, prev, est, est_refs`
)

var (
	resColCount = strings.Count(resCols, ",") + 1
	logColCount = strings.Count(logCols, ",") + 1
)

// resUpsertSQL writes one whole resource row, new or not.
//
// Each row is a statement of its own. A statement that writes several
// rows and may fail halfway (any constraint, foreign key or upsert can)
// makes SQLite keep a statement journal: the original of every page the
// statement changes, so as to undo just that statement. Past 64 KiB it
// goes to a temporary file, and a 64-row upsert into resources and its
// indexes journalled about a megabyte: about 830 MB written to /var/tmp
// in a 20,000-resource baseline, which the blob store's syncfs then
// flushed to the disk. SQLite keeps no statement journal for a statement
// of one row (none was written once the statements were of one row each),
// and the single rows cost no more CPU than the multi-row statements did
// (BenchmarkApplyIngest).
var resUpsertSQL = `INSERT INTO resources (` + resCols + `) VALUES ` + placeholders(1, resColCount) + `
		ON CONFLICT (collection, uri) DO UPDATE SET source = excluded.source, deleted = excluded.deleted,
			sha256 = excluded.sha256, md5 = excluded.md5, length = excluded.length, type = excluded.type,
			changed = excluded.changed, seq = excluded.seq, via_origin = excluded.via_origin, hops = excluded.hops,
			copy_pack = excluded.copy_pack, up_pack = excluded.up_pack, est = excluded.est, est_refs = excluded.est_refs,
			up_order = excluded.up_order`

// changeAddSQL appends one row to the change log (one row a statement,
// as resUpsertSQL says why).
var changeAddSQL = `INSERT INTO changes (` + logCols + `) VALUES ` + placeholders(1, logColCount)

// flush writes what the batch did: every row it changed, its change-log
// entries and the totals of every collection it touched.
func (a *applier) flush() error {
	args := a.args[:0]
	for _, r := range a.order {
		switch r.write {
		case writeRow:
			deleted := int64(0)
			if r.deleted {
				deleted = 1
			}
			args = append(args, r.key.collection, r.key.uri, r.source, deleted, digestValue(r.sha256), digestValue(r.md5), r.length, r.typ,
				r.changed, r.seq, r.viaOrigin, r.hops, r.copyPack, r.upPack, r.est, r.estRefs, r.upOrder)
		case writeMeta:
			// Its copy is as the catalog has it: only what the Source
			// said is new, and the copy's columns (and their indexes)
			// are left alone.
			_, err := a.stmt(a.st.resMeta).ExecContext(a.ctx, r.source, r.viaOrigin, r.hops,
				r.upPack, r.est, r.estRefs, r.upOrder, r.key.collection, r.key.uri)
			if err != nil {
				return fmt.Errorf("write upstream metadata of %s: %w", r.key.uri, err)
			}
		}
	}
	a.args = args
	if err := a.execRows(a.st.resUpsert, resColCount, args); err != nil {
		return fmt.Errorf("write resources: %w", err)
	}
	if err := a.execRows(a.st.changeAdd, logColCount, a.logged); err != nil {
		return fmt.Errorf("append to change log: %w", err)
	}
	for name, c := range a.colls {
		_, err := a.stmt(a.st.collPut).ExecContext(a.ctx,
			c.firstAt, c.lastAt, c.resources, c.bytes, c.changes, name)
		if err != nil {
			return fmt.Errorf("write collection %s totals: %w", name, err)
		}
	}
	return nil
}

// execRows runs st once for each row of args, k arguments a row.
func (a *applier) execRows(st *sql.Stmt, k int, args []any) error {
	st = a.stmt(st)
	for ; len(args) > 0; args = args[k:] {
		if _, err := st.ExecContext(a.ctx, args[:k]...); err != nil {
			return err
		}
	}
	return nil
}
