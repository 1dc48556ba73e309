package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// ErrCannotJoin is returned by Join when the node's catalog cannot be
// brought up to date: EVENTS no longer holds the events it needs, and no
// snapshot in the blob store can stand in for them. The node must not
// start: it would serve a partial catalog.
var ErrCannotJoin = errors.New("the catalog cannot be brought up to date")

// Events is the range EVENTS holds now, as JetStream reports it: First
// is 0 for a stream that never held an event, Last+1 for one emptied by
// retention.
type Events struct{ First, Last uint64 }

// JoinState is what the node has before it starts its applier.
type JoinState struct {
	// CatalogPath is where the catalog is, or goes.
	CatalogPath string
	// Have says a catalog is at CatalogPath, and Applied its last
	// applied EVENTS sequence.
	Have    bool
	Applied uint64
	Events  Events
	// Release, when the caller holds the catalog open, closes it: Join
	// calls it before a snapshot takes the catalog's place.
	Release func() error
}

// Joined says where the catalog the node starts on comes from.
type Joined struct {
	// From is "catalog" (its own, kept), "snapshot" or "replay" (a new
	// catalog that EVENTS, whole, fills from its first event).
	From string
	// Snapshot is the snapshot put in place, when From is "snapshot".
	Snapshot Snapshot
	// Skipped are the snapshots tried and found unusable, with why.
	Skipped []string
}

// missing reports whether EVENTS lacks events a catalog at applied
// needs: its first event is past the next one.
func (e Events) missing(applied uint64) bool { return e.First > applied+1 }

// Join decides, before a node starts, what catalog it starts on. A
// catalog that EVENTS can bring up to date is kept. Otherwise (no
// catalog, or one that EVENTS' retention has left behind) the newest
// snapshot that EVENTS can bring up to date is fetched, checked and put
// at CatalogPath in place of the old catalog. A node with no catalog
// and no usable snapshot replays EVENTS when EVENTS is whole; when it is
// not, Join returns ErrCannotJoin naming what is missing and what to do.
func Join(ctx context.Context, st JoinState, store storage.Objects, log *slog.Logger) (Joined, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	applied := uint64(0)
	if st.Have {
		applied = st.Applied
	}
	gap := st.Events.missing(applied)
	if st.Have && !gap {
		return Joined{From: "catalog"}, nil
	}
	var j Joined
	l, err := ListSnapshots(ctx, store)
	if err != nil {
		if !gap {
			log.WarnContext(ctx, "catalog snapshots could not be listed; replaying EVENTS from its first event", "err", err)
			return Joined{From: "replay", Skipped: []string{err.Error()}}, nil
		}
		return j, cannotJoin(st, applied, []string{err.Error()})
	}
	j.Skipped = append(j.Skipped, l.Problems...)
	for _, s := range l.Snapshots {
		switch {
		case s.Seq > st.Events.Last:
			j.Skipped = append(j.Skipped, fmt.Sprintf("snapshot %s is at sequence %d, past EVENTS' last (%d): it was taken of another EVENTS", s.Object, s.Seq, st.Events.Last))
			continue
		case st.Events.missing(s.Seq):
			j.Skipped = append(j.Skipped, fmt.Sprintf("snapshot %s is at sequence %d, and EVENTS starts at %d: the events between are gone, the snapshot is too old", s.Object, s.Seq, st.Events.First))
			continue
		case st.Have && s.Seq <= applied:
			j.Skipped = append(j.Skipped, fmt.Sprintf("snapshot %s is at sequence %d, no further than the catalog's %d", s.Object, s.Seq, applied))
			continue
		}
		began := time.Now()
		err := FetchSnapshot(ctx, store, s, st.CatalogPath+".snapshot")
		if err == nil && st.Release != nil {
			if err = st.Release(); err != nil {
				err = fmt.Errorf("closing the catalog a snapshot replaces: %w", err)
			}
			st.Release = nil
		}
		if err == nil {
			err = replaceCatalog(st.CatalogPath)
		}
		if err != nil {
			os.Remove(st.CatalogPath + ".snapshot")
			log.WarnContext(ctx, "a catalog snapshot is unusable; trying an older one", "object", s.Object, "err", err)
			j.Skipped = append(j.Skipped, err.Error())
			continue
		}
		j.From, j.Snapshot = "snapshot", s
		log.InfoContext(ctx, "catalog put in place from a snapshot; EVENTS is replayed after it", "object", s.Object,
			"catalog_applied_seq", s.Seq, "taken", s.Taken, "taken_by", s.Node, "events_first_seq", st.Events.First, "events_last_seq", st.Events.Last,
			"catalog_behind", st.Have, "skipped", len(j.Skipped), "took", time.Since(began).Round(time.Millisecond))
		return j, nil
	}
	if gap {
		return j, cannotJoin(st, applied, j.Skipped)
	}
	j.From = "replay"
	if len(j.Skipped) > 0 {
		log.WarnContext(ctx, "no usable catalog snapshot; EVENTS is whole, so the catalog is rebuilt from its first event", "skipped", strings.Join(j.Skipped, "; "))
	}
	return j, nil
}

// replaceCatalog moves the fetched snapshot at path.snapshot to path,
// removing the old catalog and its WAL first.
func replaceCatalog(path string) error {
	for _, p := range []string{path + "-wal", path + "-shm", path} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the catalog left behind: %w", err)
		}
	}
	if err := os.Rename(path+".snapshot", path); err != nil {
		return fmt.Errorf("putting the snapshot in place: %w", err)
	}
	return nil
}

// cannotJoin is the error a node refuses to start with.
func cannotJoin(st JoinState, applied uint64, skipped []string) error {
	have := "is new (no catalog at " + st.CatalogPath + ")"
	if st.Have {
		have = fmt.Sprintf("has applied EVENTS up to sequence %d", applied)
	}
	why := "the blob store holds no catalog snapshot (under " + SnapshotPrefix + ")"
	if len(skipped) > 0 {
		why = "no catalog snapshot in the blob store can stand in for them: " + strings.Join(skipped, "; ")
	}
	return fmt.Errorf("%w: this node's catalog %s, and EVENTS now starts at sequence %d: events %d to %d were removed by its retention (queue.events_max_age, events_max_bytes), and %s. "+
		"The node does not start rather than serve a partial catalog. To start it: restore a backup taken of a node (viaduct backup, viaduct restore; docs/runbook.md), "+
		"or start it again once a node with a whole catalog has written a new snapshot (snapshots.interval; the newest is viaduct_snapshot_last_success_timestamp_seconds)",
		ErrCannotJoin, have, st.Events.First, applied+1, st.Events.First-1, why)
}
