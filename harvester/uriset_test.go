package harvester

import (
	"fmt"
	"testing"
)

// TestURISet: every URI added is found, none other is; a URI a list
// names twice counts once; adding after a lookup still works.
func TestURISet(t *testing.T) {
	u := newURISet()
	uri := func(i int) string { return fmt.Sprintf("http://example.org/r/%d", i) }
	for i := 0; i < 1000; i += 2 {
		u.add(uri(i))
	}
	u.add(uri(10))
	u.add(uri(998))
	if got := u.len(); got != 500 {
		t.Fatalf("len = %d after 500 distinct URIs (two named twice), want 500", got)
	}
	for i := range 1000 {
		if got, want := u.has(uri(i)), i%2 == 0; got != want {
			t.Fatalf("has(%s) = %v, want %v", uri(i), got, want)
		}
	}
	// A URI added after a lookup is found too.
	u.add(uri(1))
	if !u.has(uri(1)) || u.has(uri(3)) || u.len() != 501 {
		t.Fatalf("after a late add: has(1) %v, has(3) %v, len %d", u.has(uri(1)), u.has(uri(3)), u.len())
	}
}
