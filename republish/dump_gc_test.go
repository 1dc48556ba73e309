package republish

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
)

// TestSupersededDumpPackages rebuilds a collection's Resource Dump three
// times, the collection changing in between: the first dump's packages
// are retired by the second rebuild and superseded by the third, which
// drops them. BlobRefs then names every package still served (ZIP and
// manifest) and none of the superseded; Forget clears them, and the state
// survives a restart.
func TestSupersededDumpPackages(t *testing.T) {
	ctx := context.Background()
	f := newDumpFixture(t, DumpConfig{})
	keysOf := func() []string {
		var ks []string
		for _, p := range f.dumps.current("alpha").Resource.Packages {
			ks = append(ks, p.Key, p.Manifest)
		}
		return ks
	}
	var dumps [][]string
	for i := range 3 {
		if i > 0 {
			body := fmt.Sprintf("added before rebuild %d", i)
			f.putBlob(t, []byte(body))
			f.add("alpha", fmt.Sprintf("http://origin.example.com/added%d", i), "created", base.Add(time.Duration(80+i)*time.Minute),
				body, "text/plain", viaduct.Change{Source: "origin"})
		}
		if err := f.dumps.RebuildResourceDump(ctx, "alpha"); err != nil {
			t.Fatal(err)
		}
		dumps = append(dumps, keysOf())
	}
	superseded, err := f.dumps.Superseded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := dumps[0]
	if want := []string{first[0]}; len(first) != 2 || !slices.Equal(superseded, want) {
		t.Fatalf("superseded %v, want the first dump's package %v", superseded, want)
	}
	refs := map[string]bool{}
	if err := f.dumps.BlobRefs(ctx, func(k string) error { refs[k] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for i, ks := range dumps {
		for _, k := range ks {
			if refs[k] != (i > 0) {
				t.Errorf("dump %d's blob %s referenced = %v", i+1, k, refs[k])
			}
		}
	}
	f.reopen(t)
	if again, _ := f.dumps.Superseded(ctx); !slices.Equal(again, superseded) {
		t.Errorf("after a restart superseded = %v, want %v", again, superseded)
	}
	if err := f.dumps.Forget(ctx, superseded); err != nil {
		t.Fatal(err)
	}
	if left, _ := f.dumps.Superseded(ctx); len(left) != 0 {
		t.Errorf("after Forget superseded = %v", left)
	}
}
