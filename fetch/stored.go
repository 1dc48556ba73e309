package fetch

import (
	"context"
	"errors"
	"fmt"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/storage"
)

// skipStored: the harvester already stored the bitstream, taken from a
// Dump package and verified against its manifest.
const skipStored = "stored_from_dump"

// stored handles a change whose bitstream the harvester committed before
// queueing it (Change.Blob): the event is published from the blob as
// stored, with the digests computed while storing it, so a bitstream from
// a package reaches EVENTS by the same path as a fetched one. When the
// blob is no longer there, or is not the size recorded, it returns no
// reason and the bitstream is fetched from the Source as usual.
func (p *Pool) stored(ctx context.Context, c *viaduct.Change) (*viaduct.Event, string, error) {
	b := c.Blob
	if b == nil || b.SHA256 == "" {
		return nil, "", nil
	}
	info, err := storage.Touch(ctx, p.deps.Blobs, b.SHA256) // touched: see storage.Sweeper
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("look up blob %s stored from a dump package: %w", b.SHA256, err)
	case info.Size != b.Length, c.Length != nil && *c.Length != info.Size:
		return nil, "", nil
	}
	return newEvent(c, b.SHA256, b.MD5, info.Size, c.Type), skipStored, nil
}
