package node

import (
	"context"
	"time"
)

// truncateWAL checkpoints the catalog's WAL and cuts it to nothing every
// cfg.Catalog.CheckpointEvery, when no reader is on an older snapshot
// (streaming reads hold one only for a chunk of rows): SQLite's own
// checkpoints copy the WAL back but leave the file its largest size.
func (n *Node) truncateWAL(ctx context.Context) error {
	t := time.NewTicker(n.cfg.Catalog.CheckpointEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		st, err := n.cat.TruncateWAL(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			n.log.Warn("could not checkpoint the catalog's WAL", "err", err)
		case st.Busy:
			n.log.Debug("catalog WAL checkpoint deferred: a reader holds an older snapshot", "frames", st.Frames, "checkpointed", st.Checkpointed)
		}
	}
}
