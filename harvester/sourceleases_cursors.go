package harvester

import (
	"context"
	"fmt"

	"github.com/viaduct-mirror/viaduct/queue"
)

// Cursor implements Cursors: from the claimed position when this
// node holds the Source, else as last stored in the bucket, else (a Source
// not harvested since positions became shared) from the catalog.
func (l *SourceLeases) Cursor(ctx context.Context, source, name string) (string, error) {
	l.mu.Lock()
	hs := l.held[source]
	l.mu.Unlock()
	if hs != nil {
		return hs.pos.Cursor(name), nil
	}
	cursors, err := l.q.ReadPosition(ctx, source)
	if err != nil {
		return "", err
	}
	if len(cursors) == 0 {
		return l.cat.Cursor(ctx, source, name)
	}
	return cursors[name], nil
}

// SetCursor implements Cursors: only the holder of the Source's
// lease writes, fenced by its claim. A change notification may come
// before this node's first pass over the Source since it started (its
// subscription outlives a restart), so the lease is taken here as a pass
// would take it, when it is free and within this node's share.
func (l *SourceLeases) SetCursor(ctx context.Context, source, name, value string) error {
	hs, err := l.take(ctx, source)
	if err != nil {
		return fmt.Errorf("source %s: cursor %s: this node does not hold the source's lease: %w", source, name, err)
	}
	return hs.pos.Set(ctx, name, value)
}

// migrate carries a Source's cursors over from the catalog, where versions
// before shared positions kept them, into a position no node has written
// yet, so that an existing install resumes where it was instead of
// harvesting everything again.
func (l *SourceLeases) migrate(ctx context.Context, pos *queue.Position) error {
	vals := map[string]string{}
	for _, name := range CursorNames() {
		v, err := l.cat.Cursor(ctx, pos.Source(), name)
		if err != nil {
			return fmt.Errorf("source %s: carrying cursors over from the catalog: %w", pos.Source(), err)
		}
		if v != "" {
			vals[name] = v
		}
	}
	if len(vals) == 0 {
		return nil
	}
	if err := pos.SetMany(ctx, vals); err != nil {
		return fmt.Errorf("source %s: carrying cursors over from the catalog: %w", pos.Source(), err)
	}
	l.log.Info("source's cursors carried over from the catalog to the shared position", "source", pos.Source(), "cursors", len(vals))
	return nil
}
