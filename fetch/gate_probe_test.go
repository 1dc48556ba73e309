package fetch

import "testing"

// TestFaultedSince: a publish failed because of the store of events when
// the store had a fault at any moment of it, including one that began and
// ended while the publish waited.
func TestFaultedSince(t *testing.T) {
	for _, c := range []struct {
		name        string
		before, now uint64
		want        bool
	}{
		{"no fault", 2, 2, false},
		{"fault before, cleared since", 3, 4, true},
		{"fault now", 2, 3, true},
		{"fault throughout", 3, 3, true},
		{"fault began and ended meanwhile", 2, 4, true},
	} {
		if got := faultedSince(c.before, c.now); got != c.want {
			t.Errorf("%s: faultedSince(%d, %d) = %v, want %v", c.name, c.before, c.now, got, c.want)
		}
	}
}
