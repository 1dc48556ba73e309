package fetch

import "testing"

// TestFaultedSince: a publish failed because of the store of events when
// the store had a fault at any moment of it, including one that began and
// ended while the publish waited.
func TestFaultedSince(t *testing.T) {
	for _, c := range []struct {
		name        string
		before, now eventsStore
		want        bool
	}{
		{"no fault", eventsStore{faults: 2}, eventsStore{faults: 2}, false},
		{"fault before, cleared since", eventsStore{faults: 3, faulted: true}, eventsStore{faults: 3}, true},
		{"fault now", eventsStore{faults: 2}, eventsStore{faults: 3, faulted: true}, true},
		{"fault began and ended meanwhile", eventsStore{faults: 2}, eventsStore{faults: 3}, true},
	} {
		if got := c.before.faultedSince(c.now); got != c.want {
			t.Errorf("%s: faultedSince = %v, want %v", c.name, got, c.want)
		}
	}
}
