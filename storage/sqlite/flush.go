package sqlite

import (
	"database/sql"
	"fmt"
	"strings"
)

// chunkSizes are the numbers of rows of the multi-row statements a batch
// writes with, largest first: a batch of n rows takes at most n/64 + 9
// statements instead of n.
var chunkSizes = [...]int{64, 16, 4, 1}

// chunkStmts is one multi-row statement per entry of chunkSizes.
type chunkStmts [len(chunkSizes)]*sql.Stmt

// Columns of the multi-row writes, and the number of each (a row's
// arguments are appended in this order by flush and by the effects).
const (
	resCols = `collection, uri, source, deleted, sha256, md5, length, type,
		changed, seq, origin, up_time, up_modified, up_hash, up_length, up_type, links, hops,
		copy_pack, up_pack, est, est_refs, up_order`
	logCols = `seq, collection, uri, op, at, received, sha256, md5, length, type,
		source, up_op, up_time, up_modified, up_hash, up_length, up_type, links, pack, prev`
)

var (
	resColCount = strings.Count(resCols, ",") + 1
	logColCount = strings.Count(logCols, ",") + 1
)

// resUpsertSQL writes n whole resource rows, new or not.
func resUpsertSQL(n int) string {
	return `INSERT INTO resources (` + resCols + `) VALUES ` + placeholders(n, resColCount) + `
		ON CONFLICT (collection, uri) DO UPDATE SET source = excluded.source, deleted = excluded.deleted,
			sha256 = excluded.sha256, md5 = excluded.md5, length = excluded.length, type = excluded.type,
			changed = excluded.changed, seq = excluded.seq, origin = excluded.origin,
			up_time = excluded.up_time, up_modified = excluded.up_modified, up_hash = excluded.up_hash,
			up_length = excluded.up_length, up_type = excluded.up_type, links = excluded.links, hops = excluded.hops,
			copy_pack = excluded.copy_pack, up_pack = excluded.up_pack, est = excluded.est, est_refs = excluded.est_refs,
			up_order = excluded.up_order`
}

// changeAddSQL appends n rows to the change log.
func changeAddSQL(n int) string {
	return `INSERT INTO changes (` + logCols + `) VALUES ` + placeholders(n, logColCount)
}

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
			up := r.up
			args = append(args, r.key.collection, r.key.uri, up[0], deleted, r.sha256, r.md5, r.length, r.typ,
				r.changed, r.seq, up[1], up[2], up[3], up[4], up[5], up[6], up[7], up[8],
				r.copyPack, r.upPack, r.est, r.estRefs, r.upOrder)
		case writeMeta:
			// Its copy is as the catalog has it: only what the Source
			// said is new, and the copy's columns (and their indexes)
			// are left alone.
			meta := append(r.up[:len(r.up):len(r.up)], r.upPack, r.est, r.estRefs, r.upOrder, r.key.collection, r.key.uri)
			if _, err := a.stmt(a.st.resMeta).ExecContext(a.ctx, meta...); err != nil {
				return fmt.Errorf("write upstream metadata of %s: %w", r.key.uri, err)
			}
		}
	}
	a.args = args
	if err := a.execChunks(&a.st.resUpsert, resColCount, args); err != nil {
		return fmt.Errorf("write resources: %w", err)
	}
	if err := a.execChunks(&a.st.changeAdd, logColCount, a.logged); err != nil {
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

// execChunks runs the statements of sts over args, rows of k arguments
// each, taking as many rows at a time as the largest chunk that fits.
func (a *applier) execChunks(sts *chunkStmts, k int, args []any) error {
	for len(args) > 0 {
		rows := len(args) / k
		i := 0
		for chunkSizes[i] > rows {
			i++
		}
		n := chunkSizes[i] * k
		if _, err := a.stmt(sts[i]).ExecContext(a.ctx, args[:n]...); err != nil {
			return err
		}
		args = args[n:]
	}
	return nil
}
