package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// collState is a collection's row, read once per transaction and written
// back at its end.
type collState struct {
	firstAt, lastAt sql.NullInt64
	resources       int64
	bytes           int64
	changes         int64
}

// applier carries one write transaction through a batch of events.
type applier struct {
	ctx   context.Context
	log   *slog.Logger
	tx    *sql.Tx
	st    *writeStmts
	colls map[string]*collState
	// rows are the resource rows the batch's events name, read by load;
	// order lists them as first named, the order flush writes them in.
	rows  map[rowKey]*rowState
	order []*rowState
	// logged holds the change-log rows the batch adds, logColCount
	// arguments each; args is flush's buffer for the resource rows.
	logged, args []any
	// bound holds the statements of st bound to tx, each bound once per
	// transaction rather than once per event.
	bound map[*sql.Stmt]*sql.Stmt
	// copyPack and upPack are reused buffers for the packed columns,
	// which write the codes of codes.go.
	copyPack, upPack packer
	// stale counts the events the batch found outranked (see order.go).
	stale int
}

// held is what the catalog holds of one resource before an event.
type held struct {
	exists, deleted  bool
	sha256, typ, md5 string
	length           int64
	// order places the row's last statement among the Source's.
	order time.Time
}

// apply applies one event to the batch's rows and change log in memory:
// see ApplyBatch for what that means. load has read its row.
func (a *applier) apply(b *Applied) error {
	ev := b.Event
	coll, err := a.collection(ev.Collection)
	if err != nil {
		return err
	}
	r := a.rows[rowKey{ev.Collection, ev.URI}]
	h := r.held
	t := orderOf(ev)
	if outranked(ev, t, &h) {
		// The Source has said something later of this resource: the
		// event is recorded as applied, with no effect at all.
		a.stale++
		a.log.Debug("event older than the catalog's record, ignored", "seq", b.Seq, "collection", ev.Collection,
			"uri", ev.URI, "op", ev.Op, "upstream_order", t, "held_order", h.order)
		return nil
	}
	newOrder := laterOrder(h.order, t)
	isHeld := h.exists && !h.deleted
	uf, hops, err := upstreamOf(ev)
	if err != nil {
		return err
	}

	var op string
	switch ev.Op {
	case resourcesync.Created, resourcesync.Updated:
		if isHeld && h.sha256 == ev.SHA256 && h.length == ev.Length && h.typ == ev.Type {
			a.upstreamOnly(r, ev, &uf, hops, newOrder)
			return nil
		}
		op = resourcesync.Updated
		if !isHeld {
			op = resourcesync.Created
		}
	case resourcesync.Deleted:
		if !isHeld {
			if h.exists {
				a.upstreamOnly(r, ev, &uf, hops, newOrder)
				return nil
			}
			a.tombstone(r, &uf, hops, newOrder, b.At.UnixMicro())
			return nil
		}
		op = resourcesync.Deleted
	}

	at := adjustTime(coll, b.At)
	switch op {
	case resourcesync.Created:
		coll.resources++
		coll.bytes += ev.Length
	case resourcesync.Updated:
		coll.bytes += ev.Length - h.length
	case resourcesync.Deleted:
		coll.resources--
		coll.bytes -= h.length
	}
	coll.changes++

	// logged is the copy the change names: for a deletion the copy that
	// went, which the catalog knows even when the worker that published
	// the deletion did not; the row keeps its facts.
	logged := copyFacts{sha256: ev.SHA256, md5: ev.MD5, typ: ev.Type, length: ev.Length}
	if op == resourcesync.Deleted {
		logged = copyFacts{sha256: h.sha256, md5: h.md5, typ: h.typ, length: h.length}
	}
	fixed, refs := SizeHint(logged.typ, &ev.Upstream)
	r.exists, r.deleted = true, op == resourcesync.Deleted
	r.sha256, r.md5, r.typ, r.length = logged.sha256, logged.md5, logged.typ, logged.length
	r.setUpstream(&uf, hops, a.packUp(&uf, ev.URI, r), fixed, refs, newOrder)
	prev := r.seq
	r.changed, r.seq = at, int64(b.Seq)
	a.copyPack.reset()
	a.copyPack.packCopy(&copyFacts{sha256: logged.sha256, md5: logged.md5, typ: logged.typ, op: op,
		length: logged.length, changed: at, seq: int64(b.Seq)})
	r.copyPack = append(r.copyPack[:0:0], a.copyPack.b...)
	r.write = writeRow

	// The log keeps what the Source said but the origin and the hops.
	uf.origin = ""
	a.upPack.reset()
	a.upPack.packChange(&changeHead{seq: int64(b.Seq), at: at, received: b.At.UnixMicro(), op: op, upOp: ev.Upstream.Op,
		copy: logged}, &uf, true)
	// The log's bounds are those of the entry a Change List renders from
	// the row: the resource's, but where the Source's URI is not the
	// row's (changeSizeHint).
	logFixed, logRefs := fixed, refs
	if ev.Upstream.URI != ev.URI {
		logFixed, logRefs = changeSizeHint(logged.typ, ev.URI, &ev.Upstream)
	}
	a.logged = append(a.logged, int64(b.Seq), ev.Collection, ev.URI, op,
		at, b.At.UnixMicro(), digestValue(logged.sha256), digestValue(logged.md5), logged.length, logged.typ,
		append([]byte(nil), a.upPack.b...), prev, logFixed, logRefs)
	return nil
}

// packUp packs u as the up_pack of row r, whose copy (its sha256, md5
// and type) is already the one the row is written with: the marks of the
// pack name it.
func (a *applier) packUp(u *upFacts, uri string, r *rowState) []byte {
	a.upPack.reset()
	a.upPack.packUp(u, uri, &copyFacts{sha256: r.sha256, md5: r.md5, typ: r.typ})
	return a.upPack.b
}

// upstreamOnly records the Source's latest metadata of a resource whose
// copy the event does not change.
func (a *applier) upstreamOnly(r *rowState, ev *viaduct.Event, u *upFacts, hops string, order time.Time) {
	fixed, refs := SizeHint(r.typ, &ev.Upstream)
	r.setUpstream(u, hops, a.packUp(u, ev.URI, r), fixed, refs, order)
}

// tombstone records the deletion of a resource the catalog has no row
// of: no copy, no change, no count, only the Source's statement and its
// order, so that a creation the Source made before the deletion, if its
// event arrives later, is known to be stale; its changed column is the
// event's time, by which retention ages it.
func (a *applier) tombstone(r *rowState, u *upFacts, hops string, order time.Time, at int64) {
	r.exists, r.deleted = true, true
	r.sha256, r.md5, r.typ, r.length, r.changed, r.seq = "", "", "", 0, at, 0
	r.setUpstream(u, hops, a.packUp(u, r.key.uri, r), 0, 0, order)
	a.copyPack.reset()
	a.copyPack.packCopy(&copyFacts{op: resourcesync.Deleted})
	r.copyPack = append(r.copyPack[:0:0], a.copyPack.b...)
	r.write = writeRow
}

// stmt returns s bound to the batch's transaction.
func (a *applier) stmt(s *sql.Stmt) *sql.Stmt {
	if b, ok := a.bound[s]; ok {
		return b
	}
	if a.bound == nil {
		a.bound = map[*sql.Stmt]*sql.Stmt{}
	}
	b := a.tx.StmtContext(a.ctx, s)
	a.bound[s] = b
	return b
}

// adjustTime turns the stream timestamp into the change's time in the log:
// at, to the microsecond, or one microsecond after the collection's last
// change if at is not later. It updates the collection's bounds.
func adjustTime(coll *collState, at time.Time) int64 {
	t := at.UnixMicro()
	if coll.lastAt.Valid && t <= coll.lastAt.Int64 {
		t = coll.lastAt.Int64 + 1
	}
	coll.lastAt = sql.NullInt64{Int64: t, Valid: true}
	if !coll.firstAt.Valid {
		coll.firstAt = coll.lastAt
	}
	return t
}

// collection returns the state of a collection, creating its row the first
// time the collection is seen.
func (a *applier) collection(name string) (*collState, error) {
	if c, ok := a.colls[name]; ok {
		return c, nil
	}
	if _, err := a.stmt(a.st.collEnsure).ExecContext(a.ctx, name); err != nil {
		return nil, fmt.Errorf("create collection: %w", err)
	}
	c := &collState{}
	err := a.stmt(a.st.collGet).QueryRowContext(a.ctx, name).
		Scan(&c.firstAt, &c.lastAt, &c.resources, &c.bytes, &c.changes)
	if err != nil {
		return nil, fmt.Errorf("read collection: %w", err)
	}
	a.colls[name] = c
	return c, nil
}
