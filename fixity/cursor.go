package fixity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
)

// cursorKey is where the audit keeps its cursor in the catalog's
// key/value state.
const cursorKey = "fixity/cursor"

// cursor is how far the audit has walked: the key of the last resource
// checked in the pass under way (empty at a pass's start), when that
// pass began, and when the last complete pass ended. It is saved every
// saveEvery and at each pass's end, so a restart re-reads at most that
// much of the walk.
type cursor struct {
	Collection string    `json:"collection,omitempty"`
	URI        string    `json:"uri,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	Completed  time.Time `json:"completed,omitzero"`
	// Bad is how many bad or missing copies the pass under way found.
	Bad uint64 `json:"bad,omitempty"`
}

// saveEvery is the least time between two saves of the cursor during a
// pass: one write of the catalog, whose single writer the applier needs.
const saveEvery = 10 * time.Second

func loadCursor(ctx context.Context, st State) (cursor, error) {
	var c cursor
	b, err := st.Value(ctx, cursorKey)
	switch {
	case errors.Is(err, catalog.ErrNotFound):
		return c, nil
	case err != nil:
		return c, fmt.Errorf("read the fixity cursor: %w", err)
	}
	if err := json.Unmarshal(b, &c); err != nil {
		// A cursor that cannot be read costs a pass from the start, not
		// the audit: said, and started again.
		return cursor{}, fmt.Errorf("read the fixity cursor %q: %w", b, err)
	}
	return c, nil
}

func saveCursor(ctx context.Context, st State, c cursor) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := st.SetValue(ctx, cursorKey, b); err != nil {
		return fmt.Errorf("save the fixity cursor: %w", err)
	}
	return nil
}

// complete reports whether the cursor is at the end of a complete pass,
// which the next pass begins Every after the start of.
func (c *cursor) complete() bool {
	return c.Collection == "" && c.URI == "" && !c.Completed.IsZero() && !c.Completed.Before(c.Started)
}
