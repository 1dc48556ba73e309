package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
)

// testObjects checks the named objects of a store that keeps them: a
// round trip, a replacement, a listing by prefix that holds no blob, a
// delete, and names that could reach outside the store refused.
func testObjects(t *testing.T, s storage.Blobs) {
	o, ok := s.(storage.Objects)
	if !ok {
		t.Skip("the store keeps no named objects")
	}
	ctx := context.Background()
	Put(t, s, []byte("a blob beside the objects"))
	put := func(name, body string) {
		t.Helper()
		if err := o.PutObject(ctx, name, bytes.NewReader([]byte(body)), int64(len(body))); err != nil {
			t.Fatalf("PutObject %s: %v", name, err)
		}
	}
	get := func(name string) (string, error) {
		r, err := o.GetObject(ctx, name)
		if err != nil {
			return "", err
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		return string(b), err
	}
	put("snapshots/a.json", "one")
	put("snapshots/a.json", "two")
	put("snapshots/b.gz", "three")
	if got, err := get("snapshots/a.json"); err != nil || got != "two" {
		t.Fatalf("GetObject after a replacement: %q, %v; want %q", got, err, "two")
	}
	var names []string
	err := o.ListObjects(ctx, "snapshots/", func(i storage.ObjectInfo) error {
		names = append(names, i.Name)
		return nil
	})
	slices.Sort(names)
	if err != nil || !slices.Equal(names, []string{"snapshots/a.json", "snapshots/b.gz"}) {
		t.Fatalf("ListObjects: %v, %v", names, err)
	}
	if err := o.DeleteObject(ctx, "snapshots/a.json"); err != nil {
		t.Fatal(err)
	}
	if err := o.DeleteObject(ctx, "snapshots/a.json"); err != nil {
		t.Fatalf("deleting an object already gone: %v", err)
	}
	if _, err := get("snapshots/a.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("GetObject of a deleted object: %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"../x", "snapshots/../../x", "blobs/x", "snapshots/", "snapshots/A", "/snapshots/x", "snapshots//x"} {
		if err := o.PutObject(ctx, bad, bytes.NewReader(nil), 0); err == nil {
			t.Errorf("PutObject %q: no error", bad)
		}
	}
	n := 0
	if err := s.(storage.Sweeper).List(ctx, func(storage.Info) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("the blob listing holds %d blobs (%v); want only the one blob, no object", n, err)
	}
}
