package catalog

import (
	"database/sql"
	"fmt"
	"time"
)

// A batch reads the rows of its resources once, changes them in memory
// event by event, and writes each one back once at its end, with the
// change log, in statements of many rows. Through database/sql and the
// cgo driver every statement costs several microseconds before SQLite
// does any work; a read, an upsert and a log insert per event cost more
// than the B-tree work itself (BenchmarkApplyIngest).

// rowKey names a resource row.
type rowKey struct{ collection, uri string }

// rowWrite is what the end of a batch writes of a row.
type rowWrite uint8

const (
	writeNone rowWrite = iota // no event changed it (or all were outranked)
	writeMeta                 // its upstream columns only (see upstreamOnly)
	writeRow                  // the whole row
)

// rowState is one resources row as the batch's events leave it.
type rowState struct {
	key rowKey
	held
	changed, seq int64
	copyPack     []byte
	write        rowWrite
	// The upstream columns, set by the last event that applied:
	// source, via_origin and hops as flush writes them (see schemaV9).
	source          string
	viaOrigin, hops sql.NullString
	upPack          []byte
	est, estRefs    int64
	upOrder         string
}

// setUpstream records the upstream columns of the event that applies to
// r (u, hops and pack, u's up_pack), with its size hint and the row's new
// order.
func (r *rowState) setUpstream(u *upFacts, hops string, pack []byte, est, estRefs int64, order time.Time) {
	r.source = u.source
	r.viaOrigin = sql.NullString{String: u.origin, Valid: u.origin != r.key.uri}
	r.hops = sql.NullString{String: hops, Valid: hops != ""}
	r.upPack = append(r.upPack[:0], pack...)
	r.est, r.estRefs = est, estRefs
	r.order = order
	r.upOrder = formatTime(order)
	r.write = max(r.write, writeMeta)
}

// loadChunk is how many rows one read of load asks for.
const loadChunk = 64

// loadSQL reads the rows of up to loadChunk URIs of one collection (a
// shorter list is padded with its last URI).
var loadSQL = `SELECT uri, deleted, sha256, md5, length, type, changed, seq, copy_pack, up_order
	FROM resources WHERE collection = ? AND uri IN (` + placeholders(loadChunk, 1) + `)`

// load reads the rows the events of pending name, in chunks of loadChunk
// URIs of one collection, into a.rows; a row the catalog does not have is
// there too, not existing.
func (a *applier) load(pending []*Applied) error {
	byColl := map[string][]string{}
	for _, b := range pending {
		k := rowKey{b.Event.Collection, b.Event.URI}
		if _, ok := a.rows[k]; ok {
			continue
		}
		r := &rowState{key: k}
		a.rows[k] = r
		a.order = append(a.order, r)
		byColl[k.collection] = append(byColl[k.collection], k.uri)
	}
	st := a.stmt(a.st.resLoad)
	args := make([]any, 1+loadChunk)
	for coll, uris := range byColl {
		args[0] = coll
		for len(uris) > 0 {
			n := min(len(uris), loadChunk)
			for i := range loadChunk {
				args[1+i] = uris[min(i, n-1)]
			}
			if err := a.loadRows(st, coll, args); err != nil {
				return err
			}
			uris = uris[n:]
		}
	}
	return nil
}

// loadRows runs one read of load.
func (a *applier) loadRows(st *sql.Stmt, coll string, args []any) error {
	rows, err := st.QueryContext(a.ctx, args...)
	if err != nil {
		return fmt.Errorf("read resources of collection %s: %w", coll, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			uri, order string
			deleted    int64
			h          held
			copyPack   []byte
			changed    int64
			seq        int64
		)
		if err := rows.Scan(&uri, &deleted, hexDigest{&h.sha256}, hexDigest{&h.md5}, &h.length, &h.typ, &changed, &seq, &copyPack, &order); err != nil {
			return fmt.Errorf("read resources of collection %s: %w", coll, err)
		}
		r := a.rows[rowKey{coll, uri}]
		if r == nil {
			return fmt.Errorf("read resources of collection %s: unasked row %s", coll, uri)
		}
		h.exists, h.deleted = true, deleted != 0
		if h.order, err = parseTime(order); err != nil {
			return fmt.Errorf("read resource %s: upstream order: %w", uri, err)
		}
		r.held, r.changed, r.seq, r.copyPack, r.upOrder = h, changed, seq, copyPack, order
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read resources of collection %s: %w", coll, err)
	}
	return nil
}

// placeholders is n groups of k comma-separated parameters, each group in
// parentheses when k > 1: "?, ?" or "(?, ?), (?, ?)".
func placeholders(n, k int) string {
	var b []byte
	for i := range n {
		if i > 0 {
			b = append(b, ", "...)
		}
		if k > 1 {
			b = append(b, '(')
		}
		for j := range k {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '?')
		}
		if k > 1 {
			b = append(b, ')')
		}
	}
	return string(b)
}
