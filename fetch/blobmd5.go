package fetch

import (
	"context"
	"fmt"
	"io"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// blobMD5 reads the stored blob sha of size bytes and returns its md5,
// after checking that the bytes hash to the key and have the size. It is
// how a change published from a blob already in the store (a worker that
// stored it died before publishing its event; another Source has the same
// bytes) carries the md5 the Source declared: the event's digests are
// always computed of the copy, and a blob the catalog knows nothing about
// has only its key to go by. A declared md5 is never copied unverified.
// Reading the blob costs one read of the store, once per such change,
// instead of a GET from the Source.
func (p *Pool) blobMD5(ctx context.Context, sha string, size int64) (string, error) {
	b, err := p.deps.Blobs.Open(ctx, sha)
	if err != nil {
		return "", fmt.Errorf("open blob %s to compute its md5: %w", sha, err)
	}
	defer b.Close()
	h := resourcesync.NewHasherFor(size, false)
	defer h.Close()
	bp := p.bufs.get(size)
	// Only the blob's Read: a file's WriteTo would copy through a 32 KiB
	// buffer of its own, whatever the size of the blob.
	n, err := io.CopyBuffer(h, struct{ io.Reader }{b}, *bp)
	p.bufs.put(bp)
	if err != nil {
		return "", fmt.Errorf("read blob %s to compute its md5: %w", sha, err)
	}
	sums := h.Sum()
	if got := sums.Get(resourcesync.SHA256); got != sha || n != size {
		return "", fmt.Errorf("blob %s holds %d bytes hashing to %s, not what its key and size say (%d bytes)", sha, n, got, size)
	}
	return sums.Get(resourcesync.MD5), nil
}
