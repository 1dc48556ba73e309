package storage

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// ErrNotFound is returned (wrapped) when no blob has the key asked for,
// including keys that could never name a blob. Callers test it with
// errors.Is; the republisher answers it with 404.
var ErrNotFound = errors.New("blob not found")

// Blobs is a content-addressed blob store. Every stage that keeps or serves
// bitstreams depends on this interface only, so the directory store and the
// S3 store are interchangeable.
type Blobs interface {
	// Create starts a new blob, of which the writer may expect what want
	// says. Bytes written go to a temporary object while their length and
	// digests are computed; nothing is visible under a key until Commit.
	Create(ctx context.Context, want Expect) (BlobWriter, error)
	// Open returns the blob's bytes, seekable so HTTP range and
	// conditional requests can be served. The caller closes it.
	Open(ctx context.Context, key string) (Blob, error)
	// Stat describes the blob without opening it.
	Stat(ctx context.Context, key string) (Info, error)
}

// Deleter removes blobs. It is separate from Blobs because only garbage
// collection needs it: harvesting and serving never delete.
type Deleter interface {
	// Delete removes the blob. Deleting a blob that is not there is not an
	// error, so an interrupted collection can simply run again.
	Delete(ctx context.Context, key string) error
}

// Sweeper is what garbage collection needs of a store beyond Blobs and
// Deleter. A blob's ModTime is when it was last committed or touched, and
// a collection deletes a blob only if that is older than the moment it
// first found the blob unreferenced: a blob a fetch worker is re-adding
// (committing the same bytes again, or finding them stored and touching
// them before it publishes its event) is never deleted.
type Sweeper interface {
	// List calls fn for every committed blob, in no particular order.
	// An error from fn stops the walk and is returned.
	List(ctx context.Context, fn func(Info) error) error
	// Touch records that the blob is in use now: its ModTime becomes
	// now. It fails with ErrNotFound when the blob is not stored, and the
	// caller then stores the bytes again.
	Touch(ctx context.Context, key string) (Info, error)
	// DeleteIdle deletes the blob unless it was committed or touched at
	// or after since, and reports whether it deleted it. A blob already
	// gone is not an error (false, nil).
	DeleteIdle(ctx context.Context, key string, since time.Time) (bool, error)
}

// Compactor is a store whose deletions leave space behind to reclaim in a
// step of their own, as the directory store's packs do. Garbage
// collection calls Compact after its deletions; it returns the bytes
// freed.
type Compactor interface {
	Compact(ctx context.Context) (freed int64, err error)
}

// Touch touches key in s when s is a Sweeper, else only stats it: what a
// fetch worker calls when it finds the bytes it was about to fetch already
// stored, before it publishes an event that refers to them.
func Touch(ctx context.Context, s Blobs, key string) (Info, error) {
	if sw, ok := s.(Sweeper); ok {
		return sw.Touch(ctx, key)
	}
	return s.Stat(ctx, key)
}

// Expect is what the writer of a new blob may expect of it. The zero
// value expects nothing: a blob of unknown length whose sha-1 nobody asks.
type Expect struct {
	// Size is the length the blob is expected to have, 0 or negative when
	// unknown. It only chooses how the digests are computed (see
	// resourcesync.NewHasherFor); a blob of another length is kept as
	// well.
	Size int64
	// SHA1 asks for the sha-1 digest in Sum, for a Source that declares
	// it; the md5 and sha-256 are always computed.
	SHA1 bool
}

// BlobWriter receives one blob's bytes. The owner must end it with Commit or
// Abort; deferring Abort right after Create is the usual shape, since Abort
// after Commit does nothing.
type BlobWriter interface {
	io.Writer
	// Sum returns what was written so far: the length and the md5 and
	// sha-256 digests, and the sha-1 when Create was asked for it. A fetch
	// worker compares them with what the Source declared before it
	// commits. A blob expected to be large may take no more writes after
	// its first Sum (see resourcesync.NewHasherFor).
	Sum() (n int64, hashes resourcesync.Hashes)
	// Commit makes the blob visible under its sha-256 key and returns the
	// key. When a blob with that key already exists its bytes stay what
	// they are (a store may write the same bytes again where that is its
	// cheapest request), it is touched (see Sweeper) and the temporary
	// object is dropped.
	Commit(ctx context.Context) (key string, err error)
	// Abort discards the temporary object. It is safe after Commit (a
	// no-op) and when called more than once.
	Abort() error
}

// Blob is an open blob: its bytes, seekable, and what the store knows about
// it.
type Blob interface {
	io.ReadSeekCloser
	Info() Info
}

// Info describes a stored blob. ModTime is when the blob was last
// committed or touched (see Sweeper): committing the same bytes again
// rewrites nothing but moves it.
type Info struct {
	Key     string // lowercase hex sha-256 of the bytes
	Size    int64
	ModTime time.Time
}
