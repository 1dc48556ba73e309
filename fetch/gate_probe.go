package fetch

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// probeBlob is what the blob store's probe commits: always the same 64
// KiB, so every probe writes one blob under one key, which garbage
// collection removes as it removes any blob nothing refers to. A probe
// commits rather than aborts because a store may send nothing to its
// server before the commit (S3 holds small blobs in memory), and a full
// file system may take a write and refuse its sync.
var probeBlob = bytes.Repeat([]byte("viaduct: blob store probe\n"), 64<<10/26)

// probeTimeout bounds one probe.
const probeTimeout = 30 * time.Second

// storeProbe commits probeBlob to blobs.
func storeProbe(blobs storage.Blobs) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		w, err := blobs.Create(ctx, storage.Expect{Size: int64(len(probeBlob))})
		if err != nil {
			return fmt.Errorf("blob store probe: %w", err)
		}
		defer w.Abort()
		if _, err := w.Write(probeBlob); err != nil {
			return fmt.Errorf("blob store probe: %w", err)
		}
		if _, err := w.Commit(ctx); err != nil {
			return fmt.Errorf("blob store probe: %w", err)
		}
		return nil
	}
}

// storeFaulter is a publisher that knows whether its store takes writes
// (queue.Queue: its embedded JetStream store), and whose epoch moves when
// a fault of the store begins or ends (odd while it lasts).
type storeFaulter interface {
	StoreFault() error
	StoreEpoch() uint64
}

// eventsEpoch is the publisher's store epoch; 0 for a publisher that
// cannot tell.
func eventsEpoch(events Publisher) uint64 {
	if sf, ok := events.(storeFaulter); ok {
		return sf.StoreEpoch()
	}
	return 0
}

// faultedSince reports whether the store had a fault at any moment
// between the epochs before and now: at either end (odd), or one that
// began and ended in between. A publish that failed over such a span
// failed because of the store, though it may take writes again by the
// time the failure is known (JetStream restarted while the publish
// waited for its acknowledgement).
func faultedSince(before, now uint64) bool {
	return before != now || now%2 == 1
}

// eventsProbe asks the publisher of events whether its store takes
// writes again; a publisher that cannot tell is taken at its word after
// the first probe's interval.
func eventsProbe(events Publisher) func(context.Context) error {
	return func(context.Context) error {
		if sf, ok := events.(storeFaulter); ok {
			return sf.StoreFault()
		}
		return nil
	}
}
