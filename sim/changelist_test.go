package sim

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"go.yaml.in/yaml/v3"
)

// TestChangeLists checks the Change List Index and its lists over three
// periods: closed lists have from and until and follow one another, the open
// one has only from, and every change is in its period's list, in forward
// chronological order, with the right op.
func TestChangeLists(t *testing.T) {
	for _, form := range []string{Form10, Form11} {
		t.Run(form, func(t *testing.T) {
			clk := newClock()
			src, base := serve(t, Config{Resources: 20, TimeForm: form, Now: clk.Now, Period: time.Hour})
			var made []Change
			for range 3 {
				made = append(made, src.Create(1)...)
				made = append(made, src.Mutate(6)...)
				made = append(made, src.Delete(1)...)
				clk.Add(25 * time.Minute)
				made = append(made, src.Update(2)...)
				clk.Add(50 * time.Minute)
			}
			idx := read(t, base+PathChangeList)
			if k := idx.Header.Kind(); k != resourcesync.KindChangeListIndex {
				t.Fatalf("Change List Index is a %s", k)
			}
			if l := idx.Header.Link("up"); l == nil || l.Href != base+PathCapabilities {
				t.Fatalf("Index up link: %+v", l)
			}
			n := len(idx.Entries)
			if n != 4 {
				t.Fatalf("Index has %d lists, want 3 closed and 1 open", n)
			}
			var got []Change
			for i, ie := range idx.Entries {
				if ie.MD == nil || ie.MD.From.IsZero() {
					t.Fatalf("Index entry %s has no from", ie.Loc)
				}
				if i > 0 && !ie.MD.From.Equal(idx.Entries[i-1].MD.Until) {
					t.Errorf("%s from %s does not follow the previous until %s", ie.Loc, ie.MD.From, idx.Entries[i-1].MD.Until)
				}
				cl := read(t, ie.Loc)
				if k := cl.Header.Kind(); k != resourcesync.KindChangeList {
					t.Fatalf("%s is a %s", ie.Loc, k)
				}
				open := i == n-1
				if cl.Header.MD.Until.IsZero() != open || ie.MD.Until.IsZero() != open {
					t.Errorf("%s: until %s in the list, %s in the Index; open=%v", ie.Loc, cl.Header.MD.Until, ie.MD.Until, open)
				}
				if !cl.Header.MD.From.Equal(ie.MD.From) {
					t.Errorf("%s: from %s, Index says %s", ie.Loc, cl.Header.MD.From, ie.MD.From)
				}
				if l := cl.Header.Link("up"); l == nil || l.Href != base+PathCapabilities {
					t.Errorf("%s: up link %+v", ie.Loc, l)
				}
				var prev time.Time
				for _, e := range cl.Entries {
					ct := e.ChangeTime()
					if ct.Before(cl.Header.MD.From) || (!open && !ct.Before(cl.Header.MD.Until)) {
						t.Errorf("%s: change at %s outside [%s, %s)", ie.Loc, ct, cl.Header.MD.From, cl.Header.MD.Until)
					}
					if !ct.After(prev) {
						t.Errorf("%s: %s at %s is not after %s", ie.Loc, e.Loc, ct, prev)
					}
					prev = ct
					checkForm(t, form, e)
					c := Change{URI: e.Loc, Op: e.MD.Change, Time: ct}
					if e.MD.Change != resourcesync.Deleted {
						c.SHA256, c.Length = e.MD.Hash.Get(resourcesync.SHA256), *e.MD.Length
					}
					got = append(got, c)
				}
			}
			want := make([]Change, len(made))
			for i, c := range made {
				want[i] = Change{URI: c.URI, Op: c.Op, Time: c.Time}
				if c.Op != resourcesync.Deleted {
					want[i].SHA256, want[i].Length = c.SHA256, c.Length
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("Change Lists say\n%v\nthe Source made\n%v", got, want)
			}
		})
	}
}

// checkForm checks where an entry carries its change time.
func checkForm(t *testing.T, form string, e *resourcesync.Entry) {
	t.Helper()
	switch form {
	case Form10:
		if !e.MD.DateTime.IsZero() || e.LastMod.IsZero() {
			t.Errorf("1.0 form %s: datetime %s, lastmod %s", e.Loc, e.MD.DateTime, e.LastMod)
		}
	case Form11:
		if e.MD.DateTime.IsZero() {
			t.Errorf("1.1 form %s: no datetime", e.Loc)
		}
		if del := e.MD.Change == resourcesync.Deleted; del != e.LastMod.IsZero() {
			t.Errorf("1.1 form %s %s: lastmod %s", e.Loc, e.MD.Change, e.LastMod)
		}
	}
}

func TestChangesSinceAndOnChange(t *testing.T) {
	clk := newClock()
	src, _ := serve(t, Config{Resources: 10, Now: clk.Now})
	var heard []Change
	src.OnChange(func(c Change) { heard = append(heard, c) })
	first := src.Mutate(5)
	clk.Add(time.Second)
	second := src.Mutate(5)
	if !slices.Equal(heard, append(slices.Clone(first), second...)) {
		t.Fatalf("OnChange heard %v", heard)
	}
	if got := src.ChangesSince(first[4].Time); !slices.Equal(got, second) {
		t.Fatalf("ChangesSince the fifth change: %v, want %v", got, second)
	}
	if got := src.ChangesSince(time.Time{}); len(got) != 10 {
		t.Fatalf("ChangesSince zero time: %d changes", len(got))
	}
}

func TestRun(t *testing.T) {
	src, err := New(Config{Resources: 10, Rate: 200})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	eventually(t, 5*time.Second, "Run to make changes", func() bool { return len(src.ChangesSince(time.Time{})) >= 5 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestMutateMix(t *testing.T) {
	src, err := New(Config{Resources: 50, Mix: Mix{Create: 1, Update: 2, Delete: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]int{}
	for _, c := range src.Mutate(400) {
		ops[c.Op]++
	}
	// Expected 100, 200, 100; the bounds are loose enough for any seed.
	if ops["created"] < 60 || ops["updated"] < 140 || ops["deleted"] < 60 || ops["created"]+ops["updated"]+ops["deleted"] != 400 {
		t.Fatalf("400 changes of mix 1:2:1 gave %v", ops)
	}
	if got, want := src.Len(), 50+ops["created"]-ops["deleted"]; got != want {
		t.Fatalf("Len %d, want %d", got, want)
	}
}

// TestEntry checks that the entry made for a pushed change is the one the
// Change List holds.
func TestEntry(t *testing.T) {
	src, base := serve(t, Config{Resources: 5})
	made := src.Mutate(6)
	cl := read(t, base+"/changelist-0.xml")
	for i, c := range made {
		e, err := src.Entry(c)
		if err != nil {
			t.Fatal(err)
		}
		got := cl.Entries[i]
		if e.Loc != got.Loc || e.MD.Change != got.MD.Change || !e.ChangeTime().Equal(got.ChangeTime()) || e.MD.Hash.String() != got.MD.Hash.String() {
			t.Fatalf("Entry(%v) = %+v %+v, Change List has %+v %+v", c, e, e.MD, got, got.MD)
		}
	}
	if _, err := src.Entry(Change{URI: base + "/elsewhere", Op: "updated"}); err == nil {
		t.Fatal("Entry took a URI that is not the Source's")
	}
}

func TestConfigYAML(t *testing.T) {
	var cfg Config
	in := "resources: 10\nseed: 3\ntime_form: \"1.0\"\nperiod: 30m\nmix: {create: 1, update: 1, delete: 0}\nhashes: [sha-256]\npart_size: 5\n"
	if err := yaml.Unmarshal([]byte(in), &cfg); err != nil {
		t.Fatal(err)
	}
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if src.cfg.Period != 30*time.Minute || src.cfg.TimeForm != Form10 || src.Len() != 10 || src.cfg.Mix.Delete != 0 || src.cfg.PartSize != 5 {
		t.Fatalf("config read as %+v", src.cfg)
	}
}

// TestChangeTimesUnique checks that change times strictly increase even when
// the clock moves by less than their microsecond granularity.
func TestChangeTimesUnique(t *testing.T) {
	clk := newClock()
	src, err := New(Config{Resources: 3, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var prev time.Time
	for range 50 {
		clk.Add(300 * time.Nanosecond)
		c := src.Update(1)[0]
		if !c.Time.After(prev) || c.Time.Nanosecond()%1000 != 0 {
			t.Fatalf("change at %s after one at %s", c.Time.Format(time.RFC3339Nano), prev.Format(time.RFC3339Nano))
		}
		prev = c.Time
	}
}
