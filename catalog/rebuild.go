package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/trace/noop"
)

// RebuildProgress is what a rebuild reports as it goes: the events applied
// so far out of the last sequence EVENTS held when it began.
type RebuildProgress struct {
	Applied, Last uint64
	Elapsed       time.Duration
}

// RebuildResult says where the old catalog went and what the new one holds.
type RebuildResult struct {
	// Aside is the old catalog's new path ("" when there was none).
	Aside   string
	Applied uint64
	// Carried is how many rows of state that EVENTS does not hold (the
	// Dumps' state, legacy cursors, the list of Sources) came over from
	// the old catalog; CarryErr why none did, when the old file could
	// not be read.
	Carried  int64
	CarryErr error
}

// rebuildEvery is how often a rebuild reports its progress.
const rebuildEvery = time.Second

// Rebuild moves the catalog file at path aside (with its WAL, see
// MoveAside), creates a new one and replays events into it with the
// applier until it has applied every event events held when it began,
// calling progress every second and at the end. The state the catalog
// keeps that is not a view of EVENTS is then copied from the old file,
// which stays where it was moved for the operator to remove. The node
// must be stopped: its applier would write the same file.
func Rebuild(ctx context.Context, path string, events EventLog, log *slog.Logger, progress func(RebuildProgress)) (RebuildResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var res RebuildResult
	last, err := events.LastEventSeq(ctx)
	if err != nil {
		return res, fmt.Errorf("rebuild catalog %s: %w", path, err)
	}
	if res.Aside, err = MoveAside(path, time.Now()); err != nil {
		return res, fmt.Errorf("rebuild catalog %s: %w", path, err)
	}
	c, err := Open(ctx, path, log)
	if err != nil {
		return res, fmt.Errorf("rebuild catalog %s: %w", path, err)
	}
	defer c.Close()
	begun := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- NewApplier(c, events, ApplierOptions{Log: log, Tracer: noop.NewTracerProvider().Tracer("viaduct/catalog/rebuild")}).Run(runCtx)
	}()
	stopped := false
	defer func() {
		cancel()
		if !stopped {
			<-done
		}
	}()
	tick := time.NewTicker(rebuildEvery)
	defer tick.Stop()
	for {
		var applierErr error
		select {
		case applierErr = <-done:
			stopped = true
			if applierErr == nil {
				applierErr = ctx.Err()
			}
			if applierErr == nil {
				applierErr = errors.New("the applier stopped")
			}
		case <-tick.C:
		}
		if res.Applied, err = c.LastApplied(ctx); err != nil {
			applierErr = errors.Join(applierErr, err)
		}
		if progress != nil {
			progress(RebuildProgress{Applied: res.Applied, Last: last, Elapsed: time.Since(begun)})
		}
		if applierErr != nil {
			return res, fmt.Errorf("rebuild catalog %s: at sequence %d of %d: %w", path, res.Applied, last, applierErr)
		}
		if res.Applied >= last {
			break
		}
	}
	cancel()
	stopped = true
	if err := <-done; err != nil {
		return res, fmt.Errorf("rebuild catalog %s: stopping the applier: %w", path, err)
	}
	if res.Aside != "" {
		res.Carried, res.CarryErr = c.carryState(ctx, res.Aside)
	}
	return res, nil
}

// MoveAside renames the catalog file at path, and its WAL and shared
// memory files with it (the WAL may hold its last commits), to
// path.before-rebuild-<time>; it returns the new path, or "" when there
// is no file at path.
func MoveAside(path string, now time.Time) (string, error) {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	aside := path + ".before-rebuild-" + now.UTC().Format("20060102T150405Z")
	for _, suffix := range []string{"-wal", "-shm", ""} {
		err := os.Rename(path+suffix, aside+suffix)
		if err != nil && !(suffix != "" && errors.Is(err, os.ErrNotExist)) {
			return "", fmt.Errorf("move the old catalog aside: %w", err)
		}
	}
	return aside, nil
}

// carryState copies from the old catalog file the rows EVENTS cannot give
// back: the kv table (the Dumps' state), the cursors of Sources not
// harvested since positions moved to NATS, and the list of Sources.
func (c *Catalog) carryState(ctx context.Context, old string) (int64, error) {
	conn, err := c.writer.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	abs, err := filepath.Abs(old)
	if err != nil {
		return 0, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}
	if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS old", u.String()); err != nil {
		return 0, fmt.Errorf("open the old catalog %s: %w", old, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "DETACH DATABASE old")
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var n int64
	for _, q := range []string{
		`INSERT OR REPLACE INTO main.kv (key, value) SELECT key, value FROM old.kv`,
		`INSERT OR REPLACE INTO main.cursors (source, name, value) SELECT source, name, value FROM old.cursors`,
		`INSERT OR REPLACE INTO main.sources (name, base_uri, collection, added, removed) SELECT name, base_uri, collection, added, removed FROM old.sources`,
	} {
		r, err := tx.ExecContext(ctx, q)
		if err != nil {
			return 0, fmt.Errorf("copy state from the old catalog %s: %w", old, err)
		}
		k, _ := r.RowsAffected()
		n += k
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return n, nil
}
