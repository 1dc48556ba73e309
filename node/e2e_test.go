package node

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/internal/miniotest"
	"github.com/viaduct-mirror/viaduct/sim"
	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/storage/s3"
)

// sharedMinIO is one MinIO server for the package's tests; each test uses
// its own bucket.
var sharedMinIO miniotest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	sharedMinIO.Close()
	os.Exit(code)
}

// useMinIO points cfg's blob store at a fresh bucket of the shared MinIO.
func useMinIO(t testing.TB, cfg *Config, bucket string) {
	t.Helper()
	endpoint, access, secret := sharedMinIO.Start(t)
	cfg.Blobs.Kind = "s3"
	cfg.Blobs.S3 = s3.Config{Endpoint: endpoint, Bucket: bucket, AccessKey: access, SecretKey: secret, CreateBucket: true}
}

// stores runs f once with the directory store and once with MinIO.
func stores(t *testing.T, bucket string, f func(t *testing.T, blobs func(*Config))) {
	t.Run("dir", func(t *testing.T) { f(t, func(*Config) {}) })
	t.Run("minio", func(t *testing.T) { f(t, func(c *Config) { useMinIO(t, c, bucket) }) })
}

// TestEndToEnd harvests a Source of 10,000 resources, then a few hundred
// creations, updates and deletions, and checks that the catalog and the
// blob store are an exact copy of the Source.
func TestEndToEnd(t *testing.T) {
	stores(t, "e2e", func(t *testing.T, blobs func(*Config)) {
		src := startSource(t, sim.Config{Resources: 10_000, Seed: 7, MinSize: 16, MaxSize: 1024})
		cfg := testConfig(t.TempDir(), sourceConfig("s", src))
		blobs(&cfg)
		n := startNode(t, cfg, nil)

		mustSync(t, n, "s")
		// Generous: MinIO on two busy cores copies about 200 a second.
		waitSettled(t, n, 3*time.Minute)
		checkMirror(t, n, "s", src)

		src.Create(150)
		src.Update(200)
		src.Delete(100)
		src.Mutate(50)
		mustSync(t, n, "s")
		waitSettled(t, n, time.Minute)
		checkMirror(t, n, "s", src)
		checkBlobs(t, n)
		checkChangeLog(t, n, "s")
		if dl := deadLetters(t, n); len(dl) != 0 {
			t.Fatalf("%d dead letters from a well-behaved Source, first: %s %v", len(dl), dl[0].Reason, dl[0].Evidence)
		}
		if cfg.Blobs.Kind == "s3" {
			checkBatched(t, n)
		}
	})
}

// checkBatched checks, in the node's metrics, that small blobs committed
// together went to MinIO in batches, every one of them confirmed.
func checkBatched(t *testing.T, n *Node) {
	t.Helper()
	on, _ := metricValue(t, n, "viaduct_s3_batching", nil)
	confirmed, _ := metricValue(t, n, "viaduct_s3_batches_total", map[string]string{"outcome": "confirmed"})
	resent, _ := metricValue(t, n, "viaduct_s3_batches_total", map[string]string{"outcome": "resent"})
	if on != 1 || confirmed == 0 || resent != 0 {
		t.Errorf("batching %v, batches confirmed %v, resent %v: want batches on, some confirmed, none resent", on, confirmed, resent)
	}
}

// checkMirror compares the catalog's collection name with the Source: every
// resource the Source has is held with its sha-256, md5 and length; every
// one it deleted is not held; nothing else is held.
func checkMirror(t testing.TB, n *Node, name string, src *sim.Server) {
	t.Helper()
	ctx := context.Background()
	snap := src.Snapshot()
	live := 0
	for uri, it := range snap {
		r, err := n.Catalog().Resource(ctx, name, uri)
		if it.Deleted {
			if err == nil && !r.Deleted {
				t.Errorf("%s is deleted at the Source, still held", uri)
			} else if err != nil && !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("catalog: %v", err)
			}
			continue
		}
		live++
		switch {
		case err != nil:
			t.Errorf("%s: %v", uri, err)
		case r.Deleted:
			t.Errorf("%s is at the Source, deleted in the catalog", uri)
		case r.SHA256 != it.SHA256 || r.MD5 != it.MD5 || r.Length != it.Length:
			t.Errorf("%s: catalog has sha256 %s md5 %s length %d, Source has %s %s %d", uri, r.SHA256, r.MD5, r.Length, it.SHA256, it.MD5, it.Length)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	held := 0
	err := n.Catalog().SourceResources(ctx, name, name, func(r *catalog.Resource) error {
		held++
		if it, ok := snap[r.URI]; !ok || it.Deleted {
			t.Errorf("catalog holds %s, which the Source does not have", r.URI)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the catalog: %v", err)
	}
	if held != live {
		t.Fatalf("catalog holds %d resources of %s, the Source has %d", held, name, live)
	}
}

// checkBlobs reads every blob in the store and checks that its bytes hash
// to its key, and that every resource the catalog holds has its blob.
func checkBlobs(t testing.TB, n *Node) {
	t.Helper()
	ctx := context.Background()
	keys := blobKeys(t, n)
	for key := range keys {
		b, err := n.Blobs().Open(ctx, key)
		if err != nil {
			t.Fatalf("open blob %s: %v", key, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, b)
		b.Close()
		if err != nil {
			t.Fatalf("read blob %s: %v", key, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != key {
			t.Fatalf("blob %s hashes to %s", key, got)
		}
	}
	cols, err := n.Catalog().Collections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		err := n.Catalog().Resources(ctx, c, "", 0, func(r *catalog.Resource) error {
			if !keys[r.SHA256] {
				t.Errorf("%s is held as %s, which is not in the store", r.URI, r.SHA256)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// blobKeys lists the keys of every blob the node's store holds, by
// looking at the store itself rather than asking the catalog.
func blobKeys(t testing.TB, n *Node) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	switch st := n.Blobs().(type) {
	case *dir.Store:
		// The store's own listing (packed blobs and files), and every
		// file outside the packs is one it lists. A closed node's store
		// is opened again, as its next start would.
		select {
		case <-n.closed:
			again, err := dir.New(st.Root())
			if err != nil {
				t.Fatalf("reopening the blob directory: %v", err)
			}
			defer again.Close()
			st = again
		default:
		}
		err := st.List(context.Background(), func(in storage.Info) error {
			keys[in.Key] = true
			return nil
		})
		if err != nil {
			t.Fatalf("listing the blob directory: %v", err)
		}
		err = filepath.WalkDir(st.Root(), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "tmp" || d.Name() == "packs") {
				return filepath.SkipDir
			}
			if !d.IsDir() && p != filepath.Join(st.Root(), dir.LayoutFile) && !keys[d.Name()] {
				t.Errorf("stray file in the blob directory: %s", p)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walking the blob directory: %v", err)
		}
	case *s3.Store:
		c := n.cfg.Blobs.S3
		mc, err := minio.New(c.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")})
		if err != nil {
			t.Fatal(err)
		}
		for obj := range mc.ListObjects(context.Background(), c.Bucket, minio.ListObjectsOptions{Prefix: c.Prefix + "blobs/", Recursive: true}) {
			if obj.Err != nil {
				t.Fatalf("listing the bucket: %v", obj.Err)
			}
			keys[filepath.Base(obj.Key)] = true
		}
	default:
		t.Fatalf("no way to list the blobs of a %T", st)
	}
	return keys
}

// checkChangeLog walks the collection's change log: no change may appear
// twice, so each (URI, content) pair is recorded at most once as a creation
// or update and at most once as a deletion.
func checkChangeLog(t testing.TB, n *Node, collection string) int {
	t.Helper()
	seen := map[string]uint64{}
	count := 0
	err := n.Catalog().Changes(context.Background(), collection, 0, 0, func(c *catalog.ChangeRecord) error {
		count++
		kind := "content"
		if c.Op == "deleted" {
			kind = "deleted"
		}
		k := c.URI + " " + kind + " " + c.SHA256
		if prev, dup := seen[k]; dup {
			t.Errorf("change log lists %s %s (%s) twice: seq %d and %d", c.Op, c.URI, c.SHA256, prev, c.Seq)
		}
		seen[k] = c.Seq
		return nil
	})
	if err != nil {
		t.Fatalf("walking the change log: %v", err)
	}
	return count
}
