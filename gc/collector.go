package gc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Catalog is what a collection reads references from and applies
// retention to. *catalog.Catalog is one.
type Catalog interface {
	// BlobRefs names every blob the catalog refers to, from one
	// snapshot, and returns that snapshot's EVENTS sequence.
	BlobRefs(ctx context.Context, fn func(sha256 string) error) (seq uint64, err error)
	// Prune removes change-log entries and deleted resources before
	// cutoff (see catalog.Catalog.Prune).
	Prune(ctx context.Context, cutoff time.Time, align time.Duration) (catalog.Pruned, error)
}

var _ Catalog = (*catalog.Catalog)(nil)

// Packages is the republisher's dump packages (republish.Dumps): the
// blobs it serves, and the ZIP keys of the packages it no longer serves,
// which a collection deletes like any unreferenced blob and then tells it
// to forget.
type Packages interface {
	BlobRefs(ctx context.Context, fn func(key string) error) error
	Superseded(ctx context.Context) ([]string, error)
	Forget(ctx context.Context, keys []string) error
}

// Turn is the right to collect now. Several nodes sharing one blob store
// must not collect at once; Take returns a context for the collection,
// which ends if the turn is lost meanwhile, and its release, or ok false
// when another node has the turn.
type Turn interface {
	Take(ctx context.Context) (run context.Context, release func(), ok bool, err error)
}

// Solo is the Turn of a node that shares its store with no other: always
// its turn.
type Solo struct{}

// Take always succeeds.
func (Solo) Take(ctx context.Context) (context.Context, func(), bool, error) {
	return ctx, func() {}, true, nil
}

// Peers is how far the catalogs of the nodes sharing the blob store have
// applied EVENTS. Every catalog is a view of the same EVENTS, so a node
// whose catalog has applied the sequence at which a collection first
// found a blob unreferenced no longer refers to it; one behind it might.
type Peers interface {
	// MinApplied is the least sequence applied by the catalog of any
	// node that reported lately, this one's included; ok is false when
	// none did.
	MinApplied(ctx context.Context) (seq uint64, ok bool, err error)
	// BlobRefs names the blobs the other nodes refer to beyond what
	// every catalog does: the dump packages each builds and serves.
	BlobRefs(ctx context.Context, fn func(key string) error) error
}

// Deps are what a Collector works on.
type Deps struct {
	Catalog Catalog
	// Blobs must also be a storage.Sweeper.
	Blobs storage.Blobs
	// Packages, when the node builds dumps.
	Packages Packages
	// Turn defaults to Solo.
	Turn Turn
	// Peers, when several nodes share the store: a blob is deleted only
	// once every node's catalog has applied the sequence at which it was
	// first found unreferenced.
	Peers Peers
	// Align rounds the retention cutoff down to a multiple of it since
	// the Unix epoch: the Change List period, so that the first Change
	// List still served is whole.
	Align time.Duration
	// Logger and Registerer may be nil.
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// Report is what one collection reclaimed.
type Report struct {
	Seq                           uint64 // the catalog snapshot the references came from
	Blobs, Bytes                  int64
	Compacted                     int64 // bytes a store's compaction freed (see storage.Compactor)
	Tombstones, Changes, Packages int64
	Marked                        int // unreferenced blobs waiting out the grace period
	Skipped                       bool
}

// Collector runs collections. Its marks (the blobs found unreferenced and
// when) live in memory: after a restart a blob waits a whole Grace again.
type Collector struct {
	cfg   Config
	d     Deps
	sw    storage.Sweeper
	log   *slog.Logger
	m     *metrics
	now   func() time.Time
	marks map[string]mark
}

// mark is a collection's first finding of an unreferenced blob: when, and
// the catalog sequence its references were read at.
type mark struct {
	at  time.Time
	seq uint64
}

// New checks cfg and deps and returns a Collector.
func New(cfg Config, d Deps) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Grace < time.Minute {
		return nil, fmt.Errorf("gc.grace: %s is under a minute", cfg.Grace)
	}
	sw, ok := d.Blobs.(storage.Sweeper)
	if d.Catalog == nil || !ok {
		return nil, errors.New("gc: needs a catalog and a blob store that can list and delete blobs")
	}
	if d.Turn == nil {
		d.Turn = Solo{}
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(d.Registerer)
	if err != nil {
		return nil, fmt.Errorf("gc: metrics: %w", err)
	}
	return &Collector{cfg: cfg, d: d, sw: sw, log: d.Logger, m: m, now: time.Now, marks: map[string]mark{}}, nil
}

// Run collects every cfg.Every until ctx ends; failures are logged and
// tried again at the next turn. It returns nil at once when collection is
// off.
func (c *Collector) Run(ctx context.Context) error {
	if c.cfg.Every == 0 {
		return nil
	}
	t := time.NewTicker(c.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := c.Collect(ctx); err != nil && ctx.Err() == nil {
			c.log.ErrorContext(ctx, "gc: collection failed", "err", err)
		}
	}
}

// Collect runs one collection if it is this node's turn: retention first,
// then the sweep of the blob store.
func (c *Collector) Collect(ctx context.Context) (Report, error) {
	var r Report
	run, release, ok, err := c.d.Turn.Take(ctx)
	if err != nil {
		c.m.runs.WithLabelValues("failed").Inc()
		return r, fmt.Errorf("gc: taking the turn: %w", err)
	}
	if !ok {
		c.m.runs.WithLabelValues("skipped").Inc()
		r.Skipped = true
		return r, nil
	}
	defer release()
	start := c.now()
	err = c.collect(run, &r)
	c.count(&r)
	if err != nil {
		c.m.runs.WithLabelValues("failed").Inc()
		return r, err
	}
	c.m.runs.WithLabelValues("done").Inc()
	c.m.last.SetToCurrentTime()
	c.log.InfoContext(ctx, "gc: collection done", "seq", r.Seq, "blobs", r.Blobs, "bytes", r.Bytes, "compacted_bytes", r.Compacted,
		"tombstones", r.Tombstones, "changes", r.Changes, "dump_packages", r.Packages, "waiting", r.Marked,
		"took", c.now().Sub(start))
	return r, nil
}

func (c *Collector) collect(ctx context.Context, r *Report) error {
	if c.cfg.Retention > 0 {
		p, err := c.d.Catalog.Prune(ctx, c.cutoff(), c.d.Align)
		r.Changes, r.Tombstones = p.Changes, p.Tombstones
		if err != nil {
			return fmt.Errorf("gc: retention: %w", err)
		}
	}
	return c.sweep(ctx, r)
}

// cutoff is now less Retention, rounded down to Align.
func (c *Collector) cutoff() time.Time {
	t := c.now().Add(-c.cfg.Retention)
	if a := c.d.Align; a > 0 {
		t = time.Unix(0, t.UnixNano()-t.UnixNano()%a.Nanoseconds())
	}
	return t.UTC()
}

func (c *Collector) count(r *Report) {
	c.m.blobs.Add(float64(r.Blobs))
	c.m.bytes.Add(float64(r.Bytes))
	c.m.tombstones.Add(float64(r.Tombstones))
	c.m.changes.Add(float64(r.Changes))
	c.m.packages.Add(float64(r.Packages))
}
