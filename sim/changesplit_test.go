package sim

import (
	"testing"
	"time"
)

// readLists reads the Change List Index and every list it names, checking
// that consecutive lists have consecutive intervals, that only the last
// is open, that no list holds more than max entries and that each entry
// lies in its list's interval. It returns the entries per list.
func readLists(t *testing.T, base string, max int) []int {
	t.Helper()
	idx := read(t, base+PathChangeList)
	var sizes []int
	var prevAt time.Time
	for i, ie := range idx.Entries {
		cl := read(t, ie.Loc)
		h := cl.Header.MD
		if !h.From.Equal(ie.MD.From) || !h.Until.Equal(ie.MD.Until) {
			t.Errorf("%s covers [%v, %v), the index says [%v, %v)", ie.Loc, h.From, h.Until, ie.MD.From, ie.MD.Until)
		}
		if i > 0 && !h.From.Equal(idx.Entries[i-1].MD.Until) {
			t.Errorf("%s is from %v, the list before until %v", ie.Loc, h.From, idx.Entries[i-1].MD.Until)
		}
		if last := i == len(idx.Entries)-1; last != h.Until.IsZero() {
			t.Errorf("%s (list %d of %d) until %v: only the last is open", ie.Loc, i+1, len(idx.Entries), h.Until)
		}
		if len(cl.Entries) > max {
			t.Errorf("%s holds %d entries, above %d", ie.Loc, len(cl.Entries), max)
		}
		for _, e := range cl.Entries {
			at := e.ChangeTime()
			if !at.After(prevAt) || at.Before(h.From) || (!h.Until.IsZero() && !at.Before(h.Until)) {
				t.Fatalf("%s [%v, %v) lists a change at %v (the one before at %v)", ie.Loc, h.From, h.Until, at, prevAt)
			}
			prevAt = at
		}
		sizes = append(sizes, len(cl.Entries))
	}
	return sizes
}

// TestChangeListSplit: a period with more changes than ChangeListSize is
// served as several lists, open and closed.
func TestChangeListSplit(t *testing.T) {
	clk := newClock()
	src, base := serve(t, Config{Resources: 10, Now: clk.Now, Period: time.Hour, ChangeListSize: 100})
	src.Update(250)
	if got := readLists(t, base, 100); len(got) != 3 || got[0] != 100 || got[1] != 100 || got[2] != 50 {
		t.Fatalf("lists of 250 changes in the open period hold %v, want 100, 100 and 50", got)
	}
	clk.Add(time.Hour)
	src.Update(1)
	if got := readLists(t, base, 100); len(got) != 4 || got[2] != 50 || got[3] != 1 {
		t.Fatalf("lists after the period closed hold %v, want 100, 100, 50 and 1", got)
	}
}

// TestChangeListSplit120k is the observed case: 120,000 changes in one
// period were one Change List; they are three, at the spec's 50,000.
func TestChangeListSplit120k(t *testing.T) {
	src, base := serve(t, Config{Resources: 1, Period: 24 * time.Hour, MinSize: 1, MaxSize: 1})
	src.Create(120000)
	if got := readLists(t, base, 50000); len(got) != 3 || got[0] != 50000 || got[1] != 50000 || got[2] != 20000 {
		t.Fatalf("lists of 120,000 changes in one period hold %v, want 50,000, 50,000 and 20,000", got)
	}
}
