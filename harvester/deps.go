package harvester

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// Cursors keeps the harvester's per-source positions: the Source's own
// times and document validators, never the local clock. A node passes its
// Source leases (sourceleases_cursors.go), which keep them in the shared
// viaduct_positions bucket, written only by the lease's holder.
type Cursors interface {
	Cursor(ctx context.Context, source, name string) (string, error)
	SetCursor(ctx context.Context, source, name, value string) error
}

// Leases decides which node harvests a Source when several share one
// queue. Hold is called before every pass over source: it returns
// ErrElsewhere when another node harvests it, else a context for the pass
// that ends if the lease is lost mid-pass, and done, called when the pass
// has ended (well or not), which may give the lease up.
type Leases interface {
	Hold(ctx context.Context, source string) (passCtx context.Context, done func(), err error)
}

// Held is what the aggregator holds, which a baseline's entries and a
// dead letter coming back are compared with.
type Held interface {
	// Lookup reads the few columns a listed entry or a dead letter is
	// compared with; found is false when the catalog has no row of uri.
	Lookup(ctx context.Context, collection, uri string) (l catalog.Lookup, found bool, err error)
	// SourceHeld walks what is held from source in collection
	// (catalog.Catalog.SourceHeld).
	SourceHeld(ctx context.Context, source, collection string, fn func(*catalog.HeldEntry) error) error
}

// Publisher queues Changes durably: when PublishChange returns nil the
// change is stored in the stream.
type Publisher interface {
	PublishChange(ctx context.Context, c *viaduct.Change) error
}

// Deps are the harvester's collaborators.
type Deps struct {
	// Client makes every request; each Source gets a Client derived from
	// it under the Source's own Policy.
	Client *upstream.Client
	// Upstream is the Config Client was built with: the base of every
	// Source's Policy, to which the Source adds its authorities.
	Upstream upstream.Config
	Cursors  Cursors
	// Leases, when set, runs each Source's passes only on the node that
	// holds its lease; Cursors must then be fenced by the same lease.
	// Without it every pass runs here (one node).
	Leases    Leases
	Held      Held
	Publisher Publisher
	// Blobs, when set, lets the harvester read Dumps: it stores each
	// verified bitstream of a package here before queueing its change.
	// Without it Dumps are never used.
	Blobs storage.Blobs
	// Progress, when set, tells a baseline's progress lines how far the
	// fetch workers are with the Source's changes.
	Progress FetchProgress
	// OnProgress, when set, receives each progress line of a baseline
	// (the demo draws it on the terminal).
	OnProgress func(Progress)
	// ProgressEvery is how often a baseline reports progress; default 5s.
	ProgressEvery time.Duration
	// DeadLetters, when set, brings a Source's dead-lettered changes back
	// after each of its passes that ends well (deadletters.go).
	DeadLetters DeadLetters
	// TracerProvider makes the spans of passes and document reads; nil
	// uses the global provider.
	TracerProvider trace.TracerProvider
	// SpoolDir is where Dump packages are downloaded to, one at a time per
	// Source, and removed once read. Default os.TempDir().
	SpoolDir string
}

// In production New is given the catalog as Held, the queue as
// Publisher and DeadLetters, and the node's SourceLeases as Leases and
// Cursors (sourceleases.go). The catalog's own cursors, where versions
// before kept them, are Cursors too: the leases fall back on them, and tests
// use them where one node harvests.
var (
	_ Cursors   = (*catalog.Catalog)(nil)
	_ Held      = (*catalog.Catalog)(nil)
	_ Publisher = (*queue.Queue)(nil)
)
