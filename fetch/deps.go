package fetch

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// ChangeSource hands out changes one at a time; *queue.ChangeStream is the
// real one. NextBefore is called by every worker at once: it waits for a
// change until the deadline (the zero time: none), except for a pull
// already sent, which only ctx's cancellation ends.
type ChangeSource interface {
	NextBefore(ctx context.Context, deadline time.Time) (*queue.ChangeMsg, error)
}

// Publisher appends an event to EVENTS; *queue.Queue is the real one.
// Events carry no de-duplication id: a repeat is the catalog's to absorb.
type Publisher interface {
	PublishEvent(ctx context.Context, e *viaduct.Event) (uint64, error)
}

// AsyncPublisher is a Publisher that can also send an event without
// waiting for the server: a worker then takes its next change while the
// event is stored, and acks the change once Wait returns nil.
// *queue.Queue is one; with any other Publisher each worker waits.
type AsyncPublisher interface {
	PublishEventAsync(ctx context.Context, e *viaduct.Event) (*queue.PendingEvent, error)
}

// Releaser is a ChangeSource holding changes it pulled and has not handed
// out; the pool calls Release once its workers stop.
type Releaser interface {
	Release()
}

// Catalog is what the workers ask the node's catalog before fetching:
// whether the copy is already held, by URI or by hash. *catalog.Catalog is
// the real one. Both answer the one shape a worker compares a change
// with, catalog.Lookup, read without the columns a worker never needs.
// Lookup reports a missing row (every change of a first baseline) as not
// found rather than as an error; HeldByHash returns an error wrapping
// catalog.ErrNotFound when nothing matches.
type Catalog interface {
	Lookup(ctx context.Context, collection, uri string) (l catalog.Lookup, found bool, err error)
	HeldByHash(ctx context.Context, source string, hs resourcesync.Hashes, length *int64) (*catalog.Lookup, error)
}

var (
	_ ChangeSource   = (*queue.ChangeStream)(nil)
	_ Publisher      = (*queue.Queue)(nil)
	_ AsyncPublisher = (*queue.Queue)(nil)
	_ Releaser       = (*queue.ChangeStream)(nil)
	_ Catalog        = (*catalog.Catalog)(nil)
)

// Deps are the parts a Pool works with.
type Deps struct {
	// Changes is where changes come from. Required.
	Changes ChangeSource
	// Blobs is where bitstreams are stored, under their sha-256. Required.
	Blobs storage.Blobs
	// Events is where the resulting events go. Required.
	Events Publisher
	// Catalog, when set, lets a worker skip what the node already holds.
	// Without it every change is fetched unless its declared sha-256 is
	// already a blob, and a replay publishes its event again, which the
	// catalog absorbs.
	Catalog Catalog
	// Client returns the upstream client of a Source, built on that
	// Source's Policy, or nil when the Source is not configured here.
	// Required.
	Client func(source string) *upstream.Client
	// TracerProvider makes the span of each change; nil uses the global
	// provider.
	TracerProvider trace.TracerProvider
}
