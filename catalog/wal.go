package catalog

import (
	"context"
	"fmt"
)

// walSizeLimit is the writer's journal_size_limit: once a checkpoint has
// copied the WAL back and writers start it over, SQLite cuts the file down
// to this size, so a WAL that grew while a long read held it does not stay
// large. It is above the autocheckpoint interval's size (walCheckpointPages
// pages), so a steady ingest never truncates and regrows it.
const walSizeLimit = 128 << 20

// truncateBusyMS is how long TruncateWAL waits for readers on older
// snapshots before it gives up until next time: it holds the one writer
// connection meanwhile, and the applier must not wait on it.
const truncateBusyMS = 200

// WALState is what a checkpoint found: whether readers kept it from
// finishing, and how many WAL frames there were and were copied back.
type WALState struct {
	Busy         bool
	Frames       int
	Checkpointed int
}

// TruncateWAL copies the whole WAL back into the database and cuts the
// file to nothing, when no reader is on an older snapshot; otherwise it
// copies what it can and reports Busy. The streaming reads hold snapshots
// only for a chunk (see chunk.go), so a node calling it now and then keeps
// its WAL small whatever its Destinations do. It waits for the writer
// connection, between two of the applier's batches.
func (c *Catalog) TruncateWAL(ctx context.Context) (WALState, error) {
	conn, err := c.writer.Conn(ctx)
	if err != nil {
		return WALState{}, fmt.Errorf("checkpoint catalog %s: %w", c.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", truncateBusyMS)); err != nil {
		return WALState{}, fmt.Errorf("checkpoint catalog %s: %w", c.path, err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeoutMS))
	var st WALState
	var busy int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &st.Frames, &st.Checkpointed); err != nil {
		return WALState{}, fmt.Errorf("checkpoint catalog %s: %w", c.path, err)
	}
	st.Busy = busy != 0
	return st, nil
}
