package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	// bound holds the statements of st bound to tx, each bound once per
	// transaction rather than once per event.
	bound map[*sql.Stmt]*sql.Stmt
	// copyPack and upPack are reused buffers for the packed columns.
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

// apply applies one event: see ApplyBatch for what that means.
func (a *applier) apply(b *Applied) error {
	ev := b.Event
	if err := validate(ev); err != nil {
		return err
	}
	coll, err := a.collection(ev.Collection)
	if err != nil {
		return err
	}
	var (
		h       held
		deleted int64
		order   string
	)
	err = a.stmt(a.st.resGet).QueryRowContext(a.ctx, ev.Collection, ev.URI).
		Scan(&deleted, &h.sha256, &h.length, &h.typ, &h.md5, &order)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return fmt.Errorf("read resource: %w", err)
	default:
		h.exists, h.deleted = true, deleted != 0
		if h.order, err = parseTime(order); err != nil {
			return fmt.Errorf("read resource: upstream order: %w", err)
		}
	}
	t := orderOf(ev)
	if outranked(ev, t, &h) {
		// The Source has said something later of this resource: the
		// event is recorded as applied, with no effect at all.
		a.stale++
		a.log.Debug("event older than the catalog's record, ignored", "seq", b.Seq, "collection", ev.Collection,
			"uri", ev.URI, "op", ev.Op, "upstream_order", t, "held_order", h.order)
		return nil
	}
	newOrder := formatTime(laterOrder(h.order, t))
	isHeld := h.exists && !h.deleted
	up, err := upstreamColumns(ev)
	if err != nil {
		return err
	}
	uf := upFactsOfColumns(ev, up)
	a.upPack.reset()
	a.upPack.packUp(&uf)

	var op string
	switch ev.Op {
	case resourcesync.Created, resourcesync.Updated:
		if isHeld && h.sha256 == ev.SHA256 && h.length == ev.Length && h.typ == ev.Type {
			return a.upstreamOnly(ev, h.typ, up, newOrder)
		}
		op = resourcesync.Updated
		if !isHeld {
			op = resourcesync.Created
		}
	case resourcesync.Deleted:
		if !isHeld {
			if h.exists {
				return a.upstreamOnly(ev, h.typ, up, newOrder)
			}
			return a.tombstone(ev, up, newOrder)
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

	if op == resourcesync.Deleted {
		// The row keeps the facts of the last copy held.
		a.copyPack.reset()
		a.copyPack.packCopy(&copyFacts{sha256: h.sha256, md5: h.md5, typ: h.typ, op: op, length: h.length, changed: at, seq: int64(b.Seq)})
		fixed, refs := SizeHint(h.typ, &ev.Upstream)
		args := append([]any{at, int64(b.Seq)}, up...)
		args = append(args, a.copyPack.b, a.upPack.b, fixed, refs, newOrder, ev.Collection, ev.URI)
		if _, err := a.stmt(a.st.resDel).ExecContext(a.ctx, args...); err != nil {
			return fmt.Errorf("mark resource deleted: %w", err)
		}
	} else {
		a.copyPack.reset()
		a.copyPack.packCopy(&copyFacts{sha256: ev.SHA256, md5: ev.MD5, typ: ev.Type, op: op, length: ev.Length, changed: at, seq: int64(b.Seq)})
		fixed, refs := SizeHint(ev.Type, &ev.Upstream)
		args := []any{ev.Collection, ev.URI, up[0], ev.SHA256, ev.MD5, ev.Length, ev.Type, at, int64(b.Seq)}
		args = append(append(args, up[1:]...), a.copyPack.b, a.upPack.b, fixed, refs, newOrder)
		if _, err := a.stmt(a.st.resPut).ExecContext(a.ctx, args...); err != nil {
			return fmt.Errorf("write resource: %w", err)
		}
	}
	// up holds source, origin, up_time, up_modified, up_hash, up_length,
	// up_type, links, hops: the log keeps all but origin and hops.
	uf.origin = ""
	logged := copyFacts{sha256: ev.SHA256, md5: ev.MD5, typ: ev.Type, length: ev.Length}
	if op == resourcesync.Deleted {
		// The log names the copy that went, which the catalog knows
		// even when the worker that published the deletion did not.
		logged = copyFacts{sha256: h.sha256, md5: h.md5, typ: h.typ, length: h.length}
	}
	a.upPack.reset()
	a.upPack.packChange(&changeHead{seq: int64(b.Seq), at: at, received: b.At.UnixMicro(), uri: ev.URI, op: op, upOp: ev.Upstream.Op,
		copy: logged}, &uf)
	_, err = a.stmt(a.st.changeAdd).ExecContext(a.ctx, int64(b.Seq), ev.Collection, ev.URI, op,
		at, b.At.UnixMicro(), logged.sha256, logged.md5, logged.length, logged.typ,
		up[0], ev.Upstream.Op, up[2], up[3], up[4], up[5], up[6], up[7], a.upPack.b)
	if err != nil {
		return fmt.Errorf("append to change log: %w", err)
	}
	return nil
}

// upstreamOnly records the Source's latest metadata of a resource whose
// copy (of type typ) the event does not change; a.upPack holds it packed.
func (a *applier) upstreamOnly(ev *viaduct.Event, typ string, up []any, order string) error {
	fixed, refs := SizeHint(typ, &ev.Upstream)
	args := append(up, a.upPack.b, fixed, refs, order, ev.Collection, ev.URI)
	if _, err := a.stmt(a.st.resMeta).ExecContext(a.ctx, args...); err != nil {
		return fmt.Errorf("write upstream metadata: %w", err)
	}
	return nil
}

// tombstone records the deletion of a resource the catalog has no row
// of: no copy, no change, no count, only the Source's statement and its
// order, so that a creation the Source made before the deletion, if its
// event arrives later, is known to be stale. a.upPack holds the upstream
// metadata packed.
func (a *applier) tombstone(ev *viaduct.Event, up []any, order string) error {
	a.copyPack.reset()
	a.copyPack.packCopy(&copyFacts{op: resourcesync.Deleted})
	args := append([]any{ev.Collection, ev.URI}, up...)
	args = append(args, a.copyPack.b, a.upPack.b, order)
	if _, err := a.stmt(a.st.resTomb).ExecContext(a.ctx, args...); err != nil {
		return fmt.Errorf("record deletion of a resource never held: %w", err)
	}
	return nil
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

// flush writes back every collection the batch touched.
func (a *applier) flush() error {
	for name, c := range a.colls {
		_, err := a.stmt(a.st.collPut).ExecContext(a.ctx,
			c.firstAt, c.lastAt, c.resources, c.bytes, c.changes, name)
		if err != nil {
			return fmt.Errorf("write collection %s totals: %w", name, err)
		}
	}
	return nil
}
