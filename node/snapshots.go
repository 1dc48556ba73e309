package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/storage"
)

// snapshotLease gives one node at a time the turn to write catalog
// snapshots to the blob store the nodes share.
const snapshotLease = "snapshot"

// openCatalog opens the node's catalog, putting the newest usable
// snapshot in place of a catalog that is missing or that EVENTS'
// retention has left behind (package backup decides), and refusing to
// start when neither the catalog nor a snapshot can be brought up to date.
// A catalog that is kept is opened once: the decision reads its applied
// sequence from the open catalog. It also refuses an EVENTS whose
// retention, as the stream has it (on an external cluster, another node
// may have set it), the snapshot schedule does not cover.
func (n *Node) openCatalog(ctx context.Context) error {
	stream, err := n.q.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		return fmt.Errorf("reading EVENTS' state: %w", err)
	}
	info := stream.CachedInfo()
	if err := n.cfg.Snapshots.CheckRetention(info.Config.MaxAge); err != nil {
		return fmt.Errorf("EVENTS, as the NATS server holds it: %w", err)
	}
	stale, _ := filepath.Glob(filepath.Join(n.cfg.DataDir, ".snapshot-*"))
	for _, d := range stale {
		os.RemoveAll(d) // a snapshot cut short by a stop
	}
	open := func() (err error) {
		if n.cat, err = catalog.Open(ctx, n.cfg.Catalog.Path, n.log.With("role", "catalog")); err != nil {
			return fmt.Errorf("opening catalog: %w", err)
		}
		return nil
	}
	st := backup.JoinState{CatalogPath: n.cfg.Catalog.Path, Events: backup.Events{First: info.State.FirstSeq, Last: info.State.LastSeq}}
	if _, err := os.Stat(st.CatalogPath); err == nil {
		if err := open(); err != nil {
			return err
		}
		if st.Applied, err = n.cat.LastApplied(ctx); err != nil {
			return fmt.Errorf("catalog %s: %w", st.CatalogPath, err)
		}
		st.Have = true
		st.Release = func() error {
			err := n.cat.Close()
			n.cat = nil
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("catalog %s: %w", st.CatalogPath, err)
	}
	objects, ok := n.blobs.(storage.Objects)
	if !ok {
		return fmt.Errorf("the %s blob store keeps no snapshots", n.cfg.Blobs.Kind)
	}
	if n.joined, err = backup.Join(ctx, st, objects, n.log.With("role", "snapshots")); err != nil {
		return err
	}
	if n.cat == nil {
		return open()
	}
	return nil
}

// startSnapshots runs the snapshot schedule on every node; the one
// holding the snapshot lease writes.
func startSnapshots(ctx context.Context, n *Node) error {
	if n.cfg.Snapshots.Interval == 0 {
		return nil
	}
	objects, ok := n.blobs.(storage.Objects)
	if !ok {
		return fmt.Errorf("starting snapshots: the %s blob store keeps no named objects", n.cfg.Blobs.Kind)
	}
	s, err := backup.NewSnapshots(n.cfg.Snapshots, backup.SnapshotDeps{Catalog: n.cat, Store: objects,
		Turn: n.q.Turn(snapshotLease), Spool: n.cfg.DataDir, Node: n.q.NodeName(), Version: n.version,
		Logger: n.log.With("role", "snapshots"), Registerer: n.reg})
	if err != nil {
		return fmt.Errorf("starting snapshots: %w", err)
	}
	n.snapshots = s
	n.spawn("snapshots", func() error { return s.Run(ctx) })
	return nil
}
