package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/storage"
)

// Turn is the right to write snapshots now: in a cluster, one node at a
// time (the snapshot lease). Take returns a context that ends if the
// turn is lost, and its release, or ok false when another node has it.
type Turn interface {
	Take(ctx context.Context) (run context.Context, release func(), ok bool, err error)
}

// Applied is the catalog's last applied EVENTS sequence.
type Applied interface {
	LastApplied(ctx context.Context) (uint64, error)
}

// Catalog is what the snapshots are taken of.
type Catalog interface {
	Backuper
	Applied
}

// Snapshots writes catalog snapshots on a schedule and keeps the newest
// Keep. Every node runs one; the node holding the turn writes, and
// every node reports the newest snapshot in the store in its metrics.
type Snapshots struct {
	cfg     Config
	cat     Catalog
	store   storage.Objects
	turn    Turn
	spool   string
	node    string
	version string
	log     *slog.Logger
	m       *metrics
}

// SnapshotDeps are what Snapshots works with.
type SnapshotDeps struct {
	Catalog Catalog
	Store   storage.Objects
	Turn    Turn
	// Spool is where the catalog's copy is made and compressed: a
	// directory on a disk with room for both.
	Spool         string
	Node, Version string
	Logger        *slog.Logger
	Registerer    prometheus.Registerer
}

// NewSnapshots checks cfg and registers the metrics.
func NewSnapshots(cfg Config, d SnapshotDeps) (*Snapshots, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(d.Registerer)
	if err != nil {
		return nil, err
	}
	return &Snapshots{cfg: cfg, cat: d.Catalog, store: d.Store, turn: d.Turn, spool: d.Spool,
		node: d.Node, version: d.Version, log: d.Logger, m: m}, nil
}

// checkEvery is how often the store is looked at: often enough that a
// snapshot is written soon after it falls due, and the metrics follow
// another node's writes.
func (s *Snapshots) checkEvery() time.Duration { return min(s.cfg.Interval, time.Minute) }

// Run writes a snapshot whenever the newest is Interval old, until ctx
// ends. A failed round is logged, counted and tried again at the next
// check.
func (s *Snapshots) Run(ctx context.Context) error {
	t := time.NewTicker(s.checkEvery())
	defer t.Stop()
	for {
		if err := s.round(ctx); err != nil && ctx.Err() == nil {
			s.m.failures.Inc()
			s.log.ErrorContext(ctx, "snapshot failed; trying again at the next check", "err", err, "next", s.checkEvery())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// round looks at the store and, when a snapshot is due, takes the turn
// and writes one.
func (s *Snapshots) round(ctx context.Context) error {
	l, err := s.observe(ctx)
	if err != nil {
		return err
	}
	if len(l.Snapshots) > 0 && time.Since(l.Snapshots[0].Taken) < s.cfg.Interval {
		return nil
	}
	_, err = s.Write(ctx)
	if errors.Is(err, errNotDue) || errors.Is(err, errTurnHeld) {
		return nil
	}
	return err
}

var (
	errNotDue   = errors.New("the catalog has applied nothing since the newest snapshot")
	errTurnHeld = errors.New("another node holds the snapshot lease")
)

// Write writes a snapshot now if this node gets the turn and its catalog
// has applied events since the newest snapshot, then applies the
// retention. It is what the schedule calls when a snapshot is due.
func (s *Snapshots) Write(ctx context.Context) (Snapshot, error) {
	run, release, ok, err := s.turn.Take(ctx)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: taking the lease: %w", err)
	}
	if !ok {
		return Snapshot{}, errTurnHeld
	}
	defer release()
	l, err := ListSnapshots(run, s.store)
	if err != nil {
		return Snapshot{}, err
	}
	applied, err := s.cat.LastApplied(run)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if applied == 0 || (len(l.Snapshots) > 0 && applied <= l.Snapshots[0].Seq) {
		return Snapshot{}, errNotDue
	}
	began := time.Now()
	snap, err := WriteSnapshot(run, s.cat, s.store, s.spool, s.node, s.version)
	if err != nil {
		return snap, err
	}
	took := time.Since(began)
	s.m.writes.Inc()
	s.m.seconds.Set(took.Seconds())
	s.log.InfoContext(ctx, "snapshot written", "object", snap.Object, "catalog_applied_seq", snap.Seq,
		"bytes", snap.Size, "catalog_bytes", snap.CatalogBytes, "took", took.Round(time.Millisecond))
	if err := s.retain(run); err != nil {
		return snap, err
	}
	_, err = s.observe(run)
	return snap, err
}

// retain deletes the snapshots beyond the newest Keep, each manifest
// before its object (so that no listing offers a snapshot whose object
// is gone), and the objects without a manifest older than the newest
// snapshot (cut short, or left by a retention that stopped midway).
// It runs only after a new snapshot is verified written.
func (s *Snapshots) retain(ctx context.Context) error {
	l, err := ListSnapshots(ctx, s.store)
	if err != nil {
		return err
	}
	deleted := 0
	for i, snap := range l.Snapshots {
		if i < s.cfg.Keep {
			continue
		}
		if err := s.store.DeleteObject(ctx, manifestName(snap.Object)); err != nil {
			return fmt.Errorf("snapshot retention: %w", err)
		}
		if err := s.store.DeleteObject(ctx, snap.Object); err != nil {
			return fmt.Errorf("snapshot retention: %w", err)
		}
		deleted++
	}
	if len(l.Snapshots) > 0 {
		newest := l.Snapshots[0].Seq
		for _, o := range l.Orphans {
			if seq, ok := stemSeq(o.Name); ok && seq < newest {
				if err := s.store.DeleteObject(ctx, o.Name); err != nil {
					return fmt.Errorf("snapshot retention: %w", err)
				}
				deleted++
			}
		}
	}
	if deleted > 0 {
		s.log.InfoContext(ctx, "snapshot retention: older snapshots deleted", "deleted", deleted, "keep", s.cfg.Keep)
	}
	return nil
}

// observe lists the store and sets the metrics from the newest snapshot
// and the manifests that could not be read.
func (s *Snapshots) observe(ctx context.Context) (Listing, error) {
	l, err := ListSnapshots(ctx, s.store)
	if err != nil {
		return l, err
	}
	s.m.count.Set(float64(len(l.Snapshots)))
	s.m.unreadable.Set(float64(len(l.Problems)))
	if len(l.Snapshots) > 0 {
		n := l.Snapshots[0]
		s.m.last.Set(float64(n.Taken.UnixNano()) / 1e9)
		s.m.bytes.Set(float64(n.Size))
		s.m.seq.Set(float64(n.Seq))
	}
	return l, nil
}

// metrics are the snapshots' gauges and counters (docs/metrics.md).
type metrics struct {
	last, bytes, seq, count, unreadable, seconds prometheus.Gauge
	writes, failures                             prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	g := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: "viaduct_snapshot_" + name, Help: help})
	}
	m := &metrics{
		last:       g("last_success_timestamp_seconds", "When the newest catalog snapshot in the blob store was taken, whichever node wrote it."),
		bytes:      g("bytes", "Size of the newest catalog snapshot in the blob store, compressed."),
		seq:        g("sequence", "EVENTS sequence of the newest catalog snapshot: a node joining from it replays EVENTS after it."),
		count:      g("count", "Catalog snapshots in the blob store."),
		unreadable: g("unreadable", "Snapshot manifests in the blob store that could not be read."),
		seconds:    g("write_seconds", "How long this node's last snapshot took to write, copy to upload and check."),
		writes: prometheus.NewCounter(prometheus.CounterOpts{Name: "viaduct_snapshot_writes_total",
			Help: "Catalog snapshots this node wrote and verified."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "viaduct_snapshot_failures_total",
			Help: "Snapshot rounds of this node that failed (logged with the reason)."}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.last, m.bytes, m.seq, m.count, m.unreadable, m.seconds, m.writes, m.failures} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("snapshot metrics: %w", err)
		}
	}
	return m, nil
}
