package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateProducersCorpus: every ResourceSync document of the
// producers' corpus (harvester/testdata/producers), which the harvester
// reads, passes `viaduct validate`: what the harvester tolerates is a
// warning there, never an error. Each file is validated at the URL its
// producer would serve it from, so that relative URIs resolve as they do
// when harvested.
func TestValidateProducersCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "harvester", "testdata", "producers")
	docs := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("sitemaps.org/schemas/sitemap")) {
			return nil // a bitstream, a note or an expected listing
		}
		rel, _ := filepath.Rel(root, path)
		parts := strings.SplitN(filepath.ToSlash(rel), "/", 3) // producer, state, path
		if len(parts) < 3 {
			return nil
		}
		docs++
		t.Run(rel, func(t *testing.T) {
			var out, errs bytes.Buffer
			base := "http://" + parts[0] + ".example/" + parts[2]
			if err := runValidate(context.Background(), []string{"--base", base, path}, &out, &errs); err != nil {
				t.Errorf("validate %s: %v\n%s%s", rel, err, out.String(), errs.String())
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if docs < 40 {
		t.Fatalf("%d documents found in the corpus, want every producer's (at least 40)", docs)
	}
	t.Logf("%d documents of %s validated", docs, root)
}
