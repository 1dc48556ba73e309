package backup

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/storage"
)

// SnapshotFormat is the version of a snapshot's layout: a gzip of the
// catalog's SQLite file, and a manifest beside it. A node refuses a
// snapshot of a format it does not know.
const SnapshotFormat = 1

// SnapshotPrefix is where snapshots are in the blob store: under the
// store's own prefix for S3, in a directory of that name for the
// directory store.
const SnapshotPrefix = "snapshots/"

// The two objects of a snapshot: the compressed catalog, written first,
// and its manifest, written once the catalog's object has been read back
// and verified, so that a snapshot without its manifest is not one.
const (
	snapshotData     = ".db.gz"
	snapshotManifest = ".json"
)

// Snapshot is a catalog snapshot's manifest: what it holds and how to
// check it.
type Snapshot struct {
	Format int `json:"format"`
	// Object is the name of the compressed catalog in the blob store.
	Object string `json:"object"`
	// Seq is the last EVENTS sequence the catalog had applied: a node
	// started on it replays EVENTS from Seq+1.
	Seq uint64 `json:"catalog_applied_seq"`
	// CatalogSchema is the catalog's schema version: a build that knows
	// fewer versions cannot start on it.
	CatalogSchema int `json:"catalog_schema_version"`
	// SHA256 and Size are the object's, compressed.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// CatalogSHA256 and CatalogBytes are the catalog file's, once
	// decompressed: they bound and check the decompression.
	CatalogSHA256 string    `json:"catalog_sha256"`
	CatalogBytes  int64     `json:"catalog_bytes"`
	Taken         time.Time `json:"taken"`
	Node          string    `json:"node"`
	Version       string    `json:"viaduct_version"`
}

// stem is the common start of a snapshot's two object names: the
// sequence, zero-padded so that names sort as sequences do, then the time.
func stem(seq uint64, taken time.Time) string {
	return fmt.Sprintf("%s%020d-%s", SnapshotPrefix, seq, strings.ToLower(taken.UTC().Format("20060102t150405.000000000z")))
}

// manifestName is the manifest's name for a snapshot whose object is
// object.
func manifestName(object string) string {
	return strings.TrimSuffix(object, snapshotData) + snapshotManifest
}

// stemSeq reads the sequence at the start of an object's name; false
// when the name is not a snapshot's.
func stemSeq(name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, SnapshotPrefix)
	if !ok || len(rest) < 21 || rest[20] != '-' {
		return 0, false
	}
	seq, err := strconv.ParseUint(rest[:20], 10, 64)
	return seq, err == nil
}

// Backuper is the catalog a snapshot is taken of.
type Backuper interface {
	Backup(ctx context.Context, dst string) (catalog.BackupInfo, error)
}

var _ Backuper = (*catalog.Catalog)(nil)

// WriteSnapshot takes a consistent copy of the catalog into a working
// directory in spool, compresses it, writes it to the store, reads it
// back and checks it, and only then writes its manifest. A snapshot cut
// short leaves at most an object without a manifest, which no node
// starts from and the next retention removes.
func WriteSnapshot(ctx context.Context, cat Backuper, store storage.Objects, spool, node, version string) (Snapshot, error) {
	work, err := os.MkdirTemp(spool, ".snapshot-")
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: making its working directory: %w", err)
	}
	defer os.RemoveAll(work)
	db := filepath.Join(work, "catalog.db")
	info, err := cat.Backup(ctx, db)
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	s := Snapshot{Format: SnapshotFormat, Seq: info.Applied, CatalogSchema: info.SchemaVersion,
		Taken: time.Now().UTC(), Node: node, Version: version}
	s.Object = stem(s.Seq, s.Taken) + snapshotData
	gz := db + ".gz"
	if err := compress(db, gz, &s); err != nil {
		return s, fmt.Errorf("snapshot at sequence %d: compressing the catalog: %w", s.Seq, err)
	}
	if err := putFile(ctx, store, s.Object, gz, s.Size); err != nil {
		return s, fmt.Errorf("snapshot at sequence %d: %w", s.Seq, err)
	}
	if err := verifyObject(ctx, store, s); err != nil {
		store.DeleteObject(context.WithoutCancel(ctx), s.Object)
		return s, fmt.Errorf("snapshot at sequence %d: reading it back: %w", s.Seq, err)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return s, err
	}
	if err := store.PutObject(ctx, manifestName(s.Object), bytes.NewReader(b), int64(len(b))); err != nil {
		return s, fmt.Errorf("snapshot at sequence %d: %w", s.Seq, err)
	}
	return s, nil
}

// compress writes the gzip of src to dst and records both files' sizes
// and digests in s. The fastest level: a catalog is mostly text and
// integers, which the fastest level already shrinks several times, and
// the snapshot holds the writing node's CPU for as long as it takes.
func compress(src, dst string, s *Snapshot) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	zsum, sum := sha256.New(), sha256.New()
	zc := &counter{w: io.MultiWriter(out, zsum)}
	zw, err := gzip.NewWriterLevel(zc, gzip.BestSpeed)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.MultiWriter(zw, sum), in)
	if err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	s.CatalogBytes, s.CatalogSHA256 = n, hex.EncodeToString(sum.Sum(nil))
	s.Size, s.SHA256 = zc.n, hex.EncodeToString(zsum.Sum(nil))
	return nil
}

// putFile writes the file at path to the store as name.
func putFile(ctx context.Context, store storage.Objects, name, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return store.PutObject(ctx, name, f, size)
}

// verifyObject reads the snapshot's object back and checks its size and
// sha-256 against s.
func verifyObject(ctx context.Context, store storage.Objects, s Snapshot) error {
	r, err := store.GetObject(ctx, s.Object)
	if err != nil {
		return err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return fmt.Errorf("reading %s: %w", s.Object, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != s.Size || got != s.SHA256 {
		return fmt.Errorf("%s: %d bytes, sha-256 %s; written %d bytes, sha-256 %s", s.Object, n, got, s.Size, s.SHA256)
	}
	return nil
}

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
