package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// viaduct catalog repack reads every row of a stopped node's catalog and
// says how many it rewrote (none, for rows this build wrote); --vacuum
// then says the file's size before and after, and the catalog still
// holds its resource.
func TestCatalogRepack(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	// No admin port: nothing another test runs can answer as the node.
	cfg := filepath.Join(t.TempDir(), "viaduct.yaml")
	conf := "data_dir: " + data + "\nadmin:\n  listen: 127.0.0.1:0\nsources:\n  - name: s\n    url: https://example.org/\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "catalog.db")
	var out, errs bytes.Buffer
	if code := Run(ctx, []string{"catalog", "repack", "--config", cfg}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "no catalog to repack") {
		t.Fatalf("repack without a catalog: exit %d, %q", code, errs.String())
	}
	c, err := catalog.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := &viaduct.Event{Source: "s", Collection: "s", URI: "https://example.org/a", Op: resourcesync.Created,
		SHA256: strings.Repeat("ab", 32), MD5: strings.Repeat("cd", 16), Length: 3, Type: "application/pdf",
		Upstream: viaduct.Change{Source: "s", Collection: "s", URI: "https://example.org/a", Op: resourcesync.Created,
			Links: []resourcesync.Link{{Rel: "describedby", Href: "https://example.org/a.xml"}}}}
	if err := c.Apply(ctx, 1, time.Now(), ev); err != nil {
		t.Fatal(err)
	}
	c.Close()
	out.Reset()
	errs.Reset()
	if code := Run(ctx, []string{"catalog", "repack", "--config", cfg, "--vacuum"}, &out, &errs); code != 0 {
		t.Fatalf("repack: exit %d, %q", code, errs.String())
	}
	for _, want := range []string{"0 of 1 resource rows and 0 of 1 change-log rows rewritten", "catalog vacuumed:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("repack said %q; want %q in it", out.String(), want)
		}
	}
	c, err = catalog.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Resource(ctx, "s", ev.URI)
	if err != nil || len(r.Upstream.Links) != 1 || r.Type != "application/pdf" {
		t.Fatalf("after repack the resource reads %+v, %v", r, err)
	}
}
