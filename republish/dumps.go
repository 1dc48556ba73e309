package republish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/viaduct-mirror/viaduct/storage"
)

// Dumps builds and serves each collection's Resource Dump and Change Dump.
// Packages go to the blob store, content-addressed like bitstreams, and
// what each collection's Dumps hold is kept in a StateStore (the catalog),
// so a restarted node serves the very same Dumps. Builds read the catalog
// through the Server's Catalog and describe entries exactly as its Resource
// and Change Lists do.
type Dumps struct {
	s     *Server
	cfg   DumpConfig
	blobs storage.Blobs
	store StateStore
	log   *slog.Logger

	mu    sync.RWMutex
	state map[string]*dumpState // replaced whole, never changed in place
	locks map[string]*dumpLocks
}

// dumpLocks serialise one collection's builds: one Resource Dump build and
// one Change Dump build at a time, and one update of its state.
type dumpLocks struct {
	resource, change, state sync.Mutex
}

// NewDumps returns the Dumps of s's collections, storing packages in
// blobs and their description in store, and loads what earlier runs
// built. A nil logger discards.
func NewDumps(ctx context.Context, s *Server, blobs storage.Blobs, store StateStore, logger *slog.Logger) (*Dumps, error) {
	if s == nil || blobs == nil || store == nil {
		return nil, errors.New("republish: dumps need a server, a blob store and a state store")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Dumps{s: s, cfg: s.cfg.Dumps, blobs: blobs, store: store, log: logger,
		state: map[string]*dumpState{}, locks: map[string]*dumpLocks{}}
	if err := d.add(ctx, s.Collections()); err != nil {
		return nil, err
	}
	s.dumps = d
	return d, nil
}

// add loads what earlier runs built for the collections names, which the
// server is about to serve.
func (d *Dumps) add(ctx context.Context, names []string) error {
	loaded := map[string]*dumpState{}
	for _, name := range names {
		ds, err := loadDumpState(ctx, d.store, name)
		if err != nil {
			return fmt.Errorf("republish: %w", err)
		}
		loaded[name] = ds
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, ds := range loaded {
		if d.state[name] == nil {
			d.state[name] = ds
			d.locks[name] = &dumpLocks{}
		}
	}
	return nil
}

// Run builds what is missing (a Resource Dump for each collection that
// has none, Change Dump packages of periods closed while the node was
// down), then rebuilds Resource Dumps on the schedule and packages closed
// Change List periods every CheckEvery, until ctx ends. Failures are
// logged and tried again at the next turn; Run returns when ctx ends, once
// its builds have stopped.
func (d *Dumps) Run(ctx context.Context) error {
	sched, err := dumpCron.Parse(d.cfg.Schedule)
	if err != nil {
		return fmt.Errorf("republish: dumps.schedule %q: %w", d.cfg.Schedule, err)
	}
	c := cron.New(cron.WithLocation(time.UTC), cron.WithChain(cron.SkipIfStillRunning(cron.DiscardLogger)))
	c.Schedule(sched, cron.FuncJob(func() {
		for _, col := range d.s.collections() {
			d.logged(ctx, col.Name, "resource dump", d.RebuildResourceDump(ctx, col.Name))
		}
	}))
	c.Start()
	defer func() { <-c.Stop().Done() }()
	for _, col := range d.s.collections() {
		if d.current(col.Name).Resource == nil {
			d.logged(ctx, col.Name, "resource dump", d.RebuildResourceDump(ctx, col.Name))
		}
	}
	t := time.NewTicker(d.cfg.CheckEvery)
	defer t.Stop()
	for {
		for _, col := range d.s.collections() {
			d.logged(ctx, col.Name, "change dump", d.UpdateChangeDump(ctx, col.Name))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (d *Dumps) logged(ctx context.Context, coll, what string, err error) {
	if err != nil && ctx.Err() == nil {
		d.log.ErrorContext(ctx, "republish: building "+what+" failed", "collection", coll, "err", err)
	}
}

// Rebuild builds the collection's Resource Dump afresh and packages the
// Change List periods closed since the last package, now. It returns an
// error wrapping ErrNotFound for a collection that is not served.
func (d *Dumps) Rebuild(ctx context.Context, coll string) error {
	if err := d.RebuildResourceDump(ctx, coll); err != nil {
		return err
	}
	return d.UpdateChangeDump(ctx, coll)
}

// RebuildResourceDump replaces the collection's Resource Dump by one of
// its current state. The previous one's packages stay served, unlisted,
// until the next rebuild.
func (d *Dumps) RebuildResourceDump(ctx context.Context, coll string) error {
	l := d.lock(coll)
	if l == nil {
		return fmt.Errorf("republish: collection %s: %w", coll, ErrNotFound)
	}
	l.resource.Lock()
	defer l.resource.Unlock()
	start := time.Now()
	rd, err := d.buildResourceDump(ctx, coll)
	if err != nil {
		return err
	}
	err = d.update(ctx, coll, func(ds *dumpState) {
		if ds.Resource != nil {
			ds.Retired = ds.Resource.Packages
		}
		ds.Resource = rd
	})
	if err == nil {
		d.log.InfoContext(ctx, "republish: resource dump built", "collection", coll, "packages", len(rd.Packages),
			"at", rd.At, "completed", rd.Completed, "took", time.Since(start))
	}
	return err
}

// UpdateChangeDump packages the collection's Change List periods closed
// since its last package, if any.
func (d *Dumps) UpdateChangeDump(ctx context.Context, coll string) error {
	l := d.lock(coll)
	if l == nil {
		return fmt.Errorf("republish: collection %s: %w", coll, ErrNotFound)
	}
	l.change.Lock()
	defer l.change.Unlock()
	pkgs, next, err := d.changeDumps(ctx, coll, d.current(coll))
	if err != nil {
		return err
	}
	if len(pkgs) == 0 && next.Equal(d.current(coll).Next) {
		return nil
	}
	err = d.update(ctx, coll, func(ds *dumpState) {
		ds.Changes = append(ds.Changes, pkgs...)
		if extra := len(ds.Changes) - d.cfg.MaxChangeDumps; extra > 0 {
			ds.Changes = ds.Changes[extra:]
		}
		ds.Next = next
	})
	if err == nil && len(pkgs) > 0 {
		d.log.InfoContext(ctx, "republish: change dump packages built", "collection", coll, "packages", len(pkgs), "until", next)
	}
	return err
}

// lock is the collection's build locks; nil for a collection not served.
func (d *Dumps) lock(coll string) *dumpLocks {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.locks[coll]
}

// current is the collection's state as last saved.
func (d *Dumps) current(coll string) *dumpState {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.state[coll]
}

// update applies change to a copy of the collection's state, saves the
// copy and only then serves it.
func (d *Dumps) update(ctx context.Context, coll string, change func(*dumpState)) error {
	l := d.lock(coll)
	l.state.Lock()
	defer l.state.Unlock()
	cur := d.current(coll)
	next := &dumpState{Resource: cur.Resource, Next: cur.Next,
		Retired: append([]dumpPackage(nil), cur.Retired...), Changes: append([]dumpPackage(nil), cur.Changes...),
		Superseded: append([]string(nil), cur.Superseded...)}
	change(next)
	next.Superseded = append(next.Superseded, dropped(cur, next)...)
	if err := saveDumpState(ctx, d.store, coll, next); err != nil {
		return fmt.Errorf("republish: %w", err)
	}
	d.mu.Lock()
	d.state[coll] = next
	d.mu.Unlock()
	return nil
}
