package fixity

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Catalog is what the audit walks and where it keeps its cursor.
// *catalog.Catalog is one.
type Catalog interface {
	HeldCopies(ctx context.Context, afterCollection, afterURI string, limit int) ([]catalog.HeldCopy, error)
	CopiesOf(ctx context.Context, sources []string, sha256, md5 string) ([]*catalog.Resource, error)
	Resource(ctx context.Context, collection, uri string) (*catalog.Resource, error)
	State
}

// State is the catalog's key/value state, where the cursor lives.
type State interface {
	Value(ctx context.Context, key string) ([]byte, error)
	SetValue(ctx context.Context, key string, value []byte) error
}

// Quarantiner moves a bad blob out from under its key, keeping its bytes
// for an operator; a blob already gone is not an error. The directory
// and S3 stores are both.
type Quarantiner interface {
	Quarantine(ctx context.Context, key string) (where string, err error)
}

// Changes queues the repair changes on CHANGES; *queue.Queue is one.
type Changes interface {
	PublishChange(ctx context.Context, c *viaduct.Change) error
}

// Turn is the right to audit the blob store now: in a cluster, one node
// audits a store at a time. Take returns a context that ends if the turn
// is lost, and its release, or ok false when another node has it.
// (gc.Turn is the same contract, and node gives both the same lease
// mechanism under different names.)
type Turn interface {
	Take(ctx context.Context) (run context.Context, release func(), ok bool, err error)
}

// Solo is the Turn of a node that shares its store with no other.
type Solo struct{}

// Take always succeeds.
func (Solo) Take(ctx context.Context) (context.Context, func(), bool, error) {
	return ctx, func() {}, true, nil
}

var (
	_ Catalog = (*catalog.Catalog)(nil)
	_ Changes = (*queue.Queue)(nil)
)

// Deps are the parts an Audit works with.
type Deps struct {
	Catalog Catalog       // required
	Blobs   storage.Blobs // required
	// Quarantine moves bad blobs aside; required (both stores are one).
	Quarantine Quarantiner
	Changes    Changes // required
	// Sources are the configured Sources' names: a bad blob's copies are
	// looked for among them and those the catalog records.
	Sources []string
	// Turn decides which node audits; nil is Solo.
	Turn Turn
	// TurnRetry is how often a node without the turn asks again. Default
	// 1m.
	TurnRetry  time.Duration
	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Now and Sleep are the audit's clock, for its pace and its pass
	// times; nil is the real one. Tests run the pace on a virtual clock.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}
