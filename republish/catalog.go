package republish

import (
	"context"
	"errors"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// ErrNotFound is what a Catalog returns (wrapped) when it holds no such
// resource; the server answers 404.
var ErrNotFound = errors.New("not in catalog")

// Record is one resource as the catalog holds it, or one change of the
// aggregator's change log.
type Record struct {
	Collection string
	// URI is the resource's URI at the Source it was harvested from: the
	// catalog's key. The aggregator's URI derives from the origin URI,
	// which is the same for a Source that is not itself an aggregator.
	URI string
	// Op is the last change (resources) or the change (change log).
	Op string
	// Seq is the EVENTS sequence of the change.
	Seq uint64
	// At is the aggregator's change time, strictly increasing within a
	// collection.
	At     time.Time
	SHA256 string
	MD5    string
	Length int64
	Type   string
	// Upstream is the change as the upstream Source stated it: its times,
	// hashes and links, from which provenance is derived.
	Upstream viaduct.Change
}

// Deleted reports whether the record is a deletion.
func (r *Record) Deleted() bool { return r.Op == resourcesync.Deleted }

// Stats summarises one collection. Last moves with every change applied to
// the collection, so it dates the documents and keys their ETags.
type Stats struct {
	Resources int64
	Changes   int64
	// First and Last are the aggregator's times of the collection's first
	// and last change; zero when it has none.
	First, Last time.Time
	// Horizon is where retention cut the change log (docs/gc.md): a
	// Change List of a period before it is gone. Zero when nothing was.
	Horizon time.Time
	// Floor, when the collection has no change yet, is a time no later
	// than that of any change it will have (catalog.CollectionStats.Floor);
	// zero when there is none.
	Floor time.Time
}

// ResourceLister streams the resources currently held (deletions
// excluded) of a collection in URI order, starting after afterURI, at most
// limit of them ("0" for all), in one consistent read. fn's error stops the
// walk and is returned. fn may be given the same *Record each time,
// refilled: it must not keep the record (its strings excepted) after it
// returns, which lets a catalog stream a million rows without a million
// allocations.
type ResourceLister interface {
	Resources(ctx context.Context, collection, afterURI string, limit int, fn func(*Record) error) error
}

// ChangeLister streams a collection's change log for change times in
// [from, until) in order, in one consistent read; a zero until means no
// upper bound. Each record carries, in Upstream, the upstream change that
// caused it, as the Source stated it then. fn may be given the same
// *Record each time, as with ResourceLister.
type ChangeLister interface {
	Changes(ctx context.Context, collection string, from, until time.Time, fn func(*Record) error) error
}

// ResourceGetter finds one resource of a collection (held or deleted) by
// its origin URI, and every resource whose harvested or origin URI is uri.
type ResourceGetter interface {
	Resource(ctx context.Context, collection, originURI string) (*Record, error)
	Lookup(ctx context.Context, uri string) ([]*Record, error)
}

// StatsReader reads a collection's Stats.
type StatsReader interface {
	Stats(ctx context.Context, collection string) (Stats, error)
}

// Catalog is everything the server reads from the catalog.
type Catalog interface {
	ResourceLister
	ChangeLister
	ResourceGetter
	StatsReader
}
