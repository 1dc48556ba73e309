package backup

import (
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/storage"
)

// ErrSnapshotDamaged marks a snapshot whose bytes do not match its
// manifest, or whose catalog does not pass SQLite's integrity check.
var ErrSnapshotDamaged = errors.New("snapshot damaged")

// maxManifest bounds a manifest read from the store.
const maxManifest = 64 << 10

// Listing is what the store holds under SnapshotPrefix.
type Listing struct {
	// Snapshots are those with a readable manifest, newest (highest
	// sequence, then latest) first.
	Snapshots []Snapshot
	// Problems are the manifests that could not be read, each with why.
	Problems []string
	// Orphans are the objects with no manifest: snapshots cut short, or
	// whose manifest was removed first by retention.
	Orphans []storage.ObjectInfo
}

// ListSnapshots reads every manifest under SnapshotPrefix.
func ListSnapshots(ctx context.Context, store storage.Objects) (Listing, error) {
	var (
		l         Listing
		manifests []string
		data      []storage.ObjectInfo
	)
	err := store.ListObjects(ctx, SnapshotPrefix, func(o storage.ObjectInfo) error {
		switch {
		case strings.HasSuffix(o.Name, snapshotManifest):
			manifests = append(manifests, o.Name)
		case strings.HasSuffix(o.Name, snapshotData):
			data = append(data, o)
		}
		return nil
	})
	if err != nil {
		return l, fmt.Errorf("listing catalog snapshots: %w", err)
	}
	described := map[string]bool{}
	for _, name := range manifests {
		s, err := readManifest(ctx, store, name)
		if err != nil {
			l.Problems = append(l.Problems, err.Error())
			continue
		}
		described[s.Object] = true
		l.Snapshots = append(l.Snapshots, s)
	}
	for _, o := range data {
		if !described[o.Name] {
			l.Orphans = append(l.Orphans, o)
		}
	}
	slices.SortFunc(l.Snapshots, func(a, b Snapshot) int {
		return cmp.Or(cmp.Compare(b.Seq, a.Seq), b.Taken.Compare(a.Taken))
	})
	return l, nil
}

// readManifest reads and checks one manifest.
func readManifest(ctx context.Context, store storage.Objects, name string) (Snapshot, error) {
	r, err := store.GetObject(ctx, name)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot manifest %s: %w", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxManifest))
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot manifest %s: %w", name, err)
	}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("snapshot manifest %s: %w: %w", name, ErrSnapshotDamaged, err)
	}
	switch {
	case s.Format != SnapshotFormat:
		return s, fmt.Errorf("snapshot manifest %s: format %d, this build reads format %d", name, s.Format, SnapshotFormat)
	case manifestName(s.Object) != name || !strings.HasSuffix(s.Object, snapshotData):
		return s, fmt.Errorf("snapshot manifest %s: names object %q, not its own: %w", name, s.Object, ErrSnapshotDamaged)
	}
	if seq, ok := stemSeq(name); !ok || seq != s.Seq {
		return s, fmt.Errorf("snapshot manifest %s: says sequence %d, its name another: %w", name, s.Seq, ErrSnapshotDamaged)
	}
	return s, nil
}

// FetchSnapshot writes the catalog of snapshot s to dst, a new file, and
// checks it on the way and at the end: the object's size and sha-256,
// the decompressed catalog's size and sha-256 (which also bound the
// decompression), SQLite's integrity check, and that its schema version
// and sequence are the manifest's and that this build can read it.
// Nothing is left at dst unless every check passed; damage is reported
// as ErrSnapshotDamaged.
func FetchSnapshot(ctx context.Context, store storage.Objects, s Snapshot, dst string) error {
	where := fmt.Sprintf("catalog snapshot %s (sequence %d, taken %s by %s)", s.Object, s.Seq, s.Taken.Format("2006-01-02 15:04:05Z07:00"), s.Node)
	if s.CatalogSchema > catalog.SchemaVersion() {
		return fmt.Errorf("%s: its catalog is at schema version %d, taken by viaduct %s; this build knows versions up to %d: start viaduct %s or later",
			where, s.CatalogSchema, s.Version, catalog.SchemaVersion(), s.Version)
	}
	tmp := dst + ".fetching"
	os.Remove(tmp)
	err := fetchTo(ctx, store, s, tmp)
	if err == nil {
		var info catalog.BackupInfo
		info, err = catalog.CheckCopy(ctx, tmp)
		switch {
		case err != nil:
			err = fmt.Errorf("%w: %w", ErrSnapshotDamaged, err)
		case info.SchemaVersion != s.CatalogSchema || info.Applied != s.Seq:
			err = fmt.Errorf("%w: its catalog is at schema %d, sequence %d; the manifest says %d, %d", ErrSnapshotDamaged, info.SchemaVersion, info.Applied, s.CatalogSchema, s.Seq)
		}
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// fetchTo decompresses the snapshot's object into path, checking both
// digests and sizes.
func fetchTo(ctx context.Context, store storage.Objects, s Snapshot, path string) error {
	r, err := store.GetObject(ctx, s.Object)
	if err != nil {
		return err
	}
	defer r.Close()
	zsum := sha256.New()
	zc := &counter{w: zsum}
	tee := io.TeeReader(r, zc)
	zr, err := gzip.NewReader(tee)
	if err != nil {
		io.Copy(io.Discard, tee)
		if got := hex.EncodeToString(zsum.Sum(nil)); zc.n != s.Size || got != s.SHA256 {
			return fmt.Errorf("%w: the object has %d bytes, sha-256 %s; the manifest says %d bytes, sha-256 %s", ErrSnapshotDamaged, zc.n, got, s.Size, s.SHA256)
		}
		return fmt.Errorf("%w: not gzip: %w", ErrSnapshotDamaged, err)
	}
	zr.Multistream(false)
	out, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	sum := sha256.New()
	n, zerr := io.Copy(io.MultiWriter(out, sum), io.LimitReader(zr, s.CatalogBytes+1))
	// The object is read to its end whatever the decompression found, so
	// that damage is reported as the object's digest shows it.
	if _, err := io.Copy(io.Discard, tee); err != nil {
		return fmt.Errorf("reading %s: %w", s.Object, err)
	}
	if got := hex.EncodeToString(zsum.Sum(nil)); zc.n != s.Size || got != s.SHA256 {
		return fmt.Errorf("%w: the object has %d bytes, sha-256 %s; the manifest says %d bytes, sha-256 %s", ErrSnapshotDamaged, zc.n, got, s.Size, s.SHA256)
	}
	if zerr != nil {
		return fmt.Errorf("%w: decompressing: %w", ErrSnapshotDamaged, zerr)
	}
	if got := hex.EncodeToString(sum.Sum(nil)); n != s.CatalogBytes || got != s.CatalogSHA256 {
		return fmt.Errorf("%w: the catalog has %d bytes, sha-256 %s; the manifest says %d bytes, sha-256 %s", ErrSnapshotDamaged, n, got, s.CatalogBytes, s.CatalogSHA256)
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}
