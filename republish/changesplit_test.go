package republish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// logChanges appends n changes of coll to the memory catalog's change
// log, one every step from first: the log only, which is all the Change
// Lists read, built at once rather than through apply (which re-sorts the
// held resources on each change).
func (f *fixture) logChanges(coll string, first time.Time, step time.Duration, n int) {
	m := f.cat
	m.mu.Lock()
	defer m.mu.Unlock()
	log := m.changes[coll]
	for i := range n {
		m.seq++
		uri := fmt.Sprintf("http://origin.example.com/r%d", i)
		rec := f.blobs.put(coll, uri, resourcesync.Updated, first.Add(time.Duration(i)*step), []byte("x"), "text/plain", viaduct.Change{Source: "origin"})
		rec.Seq = m.seq
		log = append(log, &rec)
	}
	m.changes[coll] = log
}

// splitList is one Change List the index lists, as served.
type splitList struct {
	loc        string
	from       time.Time
	until      time.Time
	entries    int
	firstEntry time.Time
}

// readSplit reads the Change List Index of alpha and every list it
// lists, checking what a Destination relies on: each list within the
// caps, valid, its entries inside its interval and in order; consecutive
// lists with consecutive intervals. It returns the lists.
func readSplit(t *testing.T, f *fixture, maxEntries int) []splitList {
	t.Helper()
	ih, locs, _ := f.locs(t, "/alpha/changelist.xml")
	if ih.Kind() != resourcesync.KindChangeListIndex {
		t.Fatalf("index kind %s", ih.Kind())
	}
	var out []splitList
	var prevAt time.Time
	for i, l := range locs {
		_, body := f.get(t, strings.TrimPrefix(l, f.srv.cfg.BaseURL))
		if len(body) > int(f.srv.cfg.MaxBytes) {
			t.Errorf("list %s: %d bytes, above max_bytes %d", l, len(body), f.srv.cfg.MaxBytes)
		}
		rd, err := resourcesync.NewReader(strings.NewReader(string(body)), resourcesync.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		h := rd.Header()
		sl := splitList{loc: l, from: h.MD.From, until: h.MD.Until}
		for {
			e, err := rd.Next()
			if err != nil {
				break
			}
			at := e.ChangeTime()
			if sl.entries == 0 {
				sl.firstEntry = at
			}
			if !at.After(prevAt) || at.Before(sl.from) || (!sl.until.IsZero() && !at.Before(sl.until)) {
				t.Fatalf("list %s [%v, %v): change at %v outside it or not after %v", l, sl.from, sl.until, at, prevAt)
			}
			prevAt = at
			sl.entries++
		}
		if sl.entries > maxEntries {
			t.Errorf("list %s holds %d entries, above %d", l, sl.entries, maxEntries)
		}
		if i > 0 && !sl.from.Equal(out[i-1].until) {
			t.Errorf("list %s is from %v, the one before it until %v", l, sl.from, out[i-1].until)
		}
		if last := i == len(locs)-1; last != sl.until.IsZero() {
			t.Errorf("list %d of %d (%s) until %v: only the last is open", i+1, len(locs), l, sl.until)
		}
		out = append(out, sl)
	}
	return out
}

// TestChangeListSplitInPeriod: a period with more changes than a list may
// hold is served as several lists with consecutive intervals, the first
// at the period's own URL; in the open period the last piece is open and
// the others closed; a closed period keeps its pieces as more changes
// come later.
func TestChangeListSplitInPeriod(t *testing.T) {
	f := newFixture(t, Config{MaxEntries: 100, ChangeListPeriod: time.Hour})
	f.logChanges("alpha", base, time.Second, 250) // 250 changes in the first hour
	lists := readSplit(t, f, 100)
	if len(lists) != 3 || lists[0].entries != 100 || lists[1].entries != 100 || lists[2].entries != 50 {
		t.Fatalf("%d lists for 250 changes in one period, want 100, 100 and 50: %+v", len(lists), lists)
	}
	if want := f.srv.cfg.BaseURL + "/alpha/changelist/" + base.Format(periodLayout) + ".xml"; lists[0].loc != want {
		t.Errorf("the period's first list is at %s, want the period's URL %s", lists[0].loc, want)
	}
	if !lists[1].from.Equal(lists[1].firstEntry) || !lists[0].from.Equal(base) {
		t.Errorf("pieces from %v and %v, want the period's start and the first change of the second", lists[0].from, lists[1].from)
	}

	// A change in the next period closes the first: its pieces stay,
	// the last one now closed at the period's end.
	f.logChanges("alpha", base.Add(90*time.Minute), time.Second, 1)
	lists2 := readSplit(t, f, 100)
	if len(lists2) != 4 {
		t.Fatalf("%d lists after the period closed, want 4", len(lists2))
	}
	for i := range 2 {
		if lists2[i] != lists[i] {
			t.Errorf("piece %d changed when the period closed: %+v, was %+v", i, lists2[i], lists[i])
		}
	}
	if !lists2[2].until.Equal(base.Add(time.Hour)) {
		t.Errorf("the closed period's last piece until %v, want the period's end", lists2[2].until)
	}
	// A piece name that is not a piece start is not served.
	if resp, _ := f.get(t, "/alpha/changelist/"+base.Format(periodLayout)+"-1.xml"); resp.StatusCode != 404 {
		t.Errorf("a list at a time that starts no piece answered %s, want 404", resp.Status)
	}
}

// TestChangeListSplitBytes: a period whose entries fit the entry cap but
// not the byte cap is split by bytes.
func TestChangeListSplitBytes(t *testing.T) {
	const maxBytes = 16384
	f := newFixture(t, Config{MaxBytes: maxBytes})
	long := strings.Repeat("long", 40)
	for i := range 80 {
		f.add("alpha", fmt.Sprintf("http://origin.example.com/%s/%03d", long, i), "created",
			base.Add(time.Duration(i)*time.Second), "x", "text/plain", viaduct.Change{
				Links: []resourcesync.Link{{Rel: "via", Href: fmt.Sprintf("http://o.example/%s/%d", long, i)}},
			})
	}
	lists := readSplit(t, f, SitemapMaxEntries)
	total := 0
	for _, l := range lists {
		total += l.entries
	}
	if len(lists) < 2 || total != 80 {
		t.Fatalf("%d lists holding %d changes, want several holding 80", len(lists), total)
	}
}

// TestChangeListSplit120k is the observed case with the spec's caps:
// 120,000 changes in one period were one Change List. They are served as
// several, each within 50,000 entries and 50 MB (by the entries' size
// bounds, which may cut a list before 50,000), together all 120,000.
func TestChangeListSplit120k(t *testing.T) {
	f := newFixture(t, Config{ChangeListPeriod: 24 * time.Hour})
	f.logChanges("alpha", base, 500*time.Microsecond, 120000)
	f.logChanges("alpha", base.Add(25*time.Hour), time.Second, 1) // closes the period
	lists := readSplit(t, f, SitemapMaxEntries)
	total, inPeriod := 0, 0
	for _, l := range lists {
		total += l.entries
		if l.from.Before(base.Add(24 * time.Hour)) {
			inPeriod++
		}
	}
	if total != 120001 || inPeriod < 3 {
		t.Fatalf("%d lists for the period (want at least 3), holding %d changes with the next period's (want 120,001)", inPeriod, total)
	}
}

// TestChangeListSplitSQLite splits a period of the real catalog, which
// counts a period's changes before walking it.
func TestChangeListSplitSQLite(t *testing.T) {
	f := newSQLiteFixture(t, Config{MaxEntries: 100})
	for i := range 250 {
		ev := &viaduct.Event{Source: "origin", Collection: "alpha", URI: fmt.Sprintf("http://origin.example.com/r%d", i),
			Op: resourcesync.Created, Type: "text/plain", Upstream: viaduct.Change{Source: "origin", Collection: "alpha"}}
		ev.Upstream.URI, ev.Upstream.Op = ev.URI, ev.Op
		f.apply(t, base.Add(time.Duration(i)*time.Second), ev, []byte(fmt.Sprint(i)))
	}
	lists := readSplit(t, f.fixture, 100)
	if len(lists) != 3 || lists[0].entries != 100 || lists[2].entries != 50 {
		t.Fatalf("%d lists for 250 changes in one period, want 100, 100 and 50", len(lists))
	}
}

// TestChangeListSplitSQLiteSizes: the real catalog cuts a period by the
// bounds its change log keeps exactly where a walk decoding every change
// cuts it, by entries and by bytes, with links, via links and Sources'
// URIs that are not the rows': runs of changes taken whole where they
// fit, and one by one where a piece ends among them.
func TestChangeListSplitSQLiteSizes(t *testing.T) {
	ctx := context.Background()
	const n = 4000
	for _, cfg := range []Config{
		{MaxEntries: 1500, ChangeListPeriod: time.Hour},
		{MaxBytes: 2_000_000, ChangeListPeriod: time.Hour},
	} {
		f := newSQLiteFixture(t, cfg)
		long := strings.Repeat("long", 20)
		batch := make([]catalog.Applied, 0, n)
		for i := range n {
			sum := sha256.Sum256([]byte(fmt.Sprint(i)))
			ev := &viaduct.Event{Source: "origin", Collection: "alpha", URI: fmt.Sprintf("http://origin.example.com/%s/r%d", long, i),
				Op: resourcesync.Created, Type: "text/plain", SHA256: hex.EncodeToString(sum[:]), MD5: hex.EncodeToString(sum[:16]), Length: 1,
				Upstream: viaduct.Change{Source: "origin", Collection: "alpha"}}
			ev.Upstream.URI, ev.Upstream.Op = ev.URI, ev.Op
			switch i % 7 {
			case 1:
				ev.Upstream.Links = []resourcesync.Link{{Rel: "via", Href: fmt.Sprintf("http://o.example/%s/%d?a=1&b=2", long, i)},
					{Rel: "describedby", Href: fmt.Sprintf("http://origin.example.com/%s/r%d.xml", long, i), Type: "application/xml"}}
			case 2:
				ev.Upstream.URI = fmt.Sprintf("http://aggregator.example.org/%s/%s/r%d", long, long, i)
			}
			batch = append(batch, catalog.Applied{Seq: uint64(i + 1), At: base.Add(time.Duration(i) * time.Millisecond), Event: ev})
		}
		if err := f.cat.ApplyBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		st, err := f.srv.cat.Stats(ctx, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		sc := &sqliteWalkCounter{SQLiteCatalog: FromSQLite(f.cat)}
		sized, walked := newServerOn(t, f, sc), newServerOn(t, f, &walkCounter{Catalog: FromSQLite(f.cat)})
		bySize, err := sized.pieces(ctx, "alpha", base, st, false)
		if err != nil {
			t.Fatal(err)
		}
		// The same catalog without ChangeSizes (nor CountChanges): every
		// change decoded.
		byWalk, err := walked.pieces(ctx, "alpha", base, st, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(byWalk) < 3 || !slices.EqualFunc(bySize, byWalk, time.Time.Equal) {
			t.Errorf("max entries %d, max bytes %d: cut by the kept bounds at %v, by decoding every change at %v; want the same, several pieces",
				cfg.MaxEntries, cfg.MaxBytes, bySize, byWalk)
		}
		if sc.n != n || sc.whole == 0 || sc.whole == n {
			t.Errorf("max entries %d, max bytes %d: the walk took %d changes, %d of them in runs taken whole; want %d, some whole and some not",
				cfg.MaxEntries, cfg.MaxBytes, sc.n, sc.whole, n)
		}
	}
}

// newServerOn is a server of f's configuration on cat.
func newServerOn(t *testing.T, f *sqliteFixture, cat Catalog) *Server {
	t.Helper()
	srv, err := New(f.srv.cfg, cat, f.store, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// walkCounter counts the changes a catalog's change walks hand out.
type walkCounter struct {
	Catalog
	n int
}

func (w *walkCounter) Changes(ctx context.Context, coll string, from, until time.Time, fn func(*Record) error) error {
	return w.Catalog.Changes(ctx, coll, from, until, func(r *Record) error { w.n++; return fn(r) })
}

// TestOpenPeriodSplitGoesOn: while changes keep coming into the open
// period, its split is carried on from where the last one stopped: a
// request walks only the changes that came since, and cuts the same
// pieces as a split of the whole period from its start.
func TestOpenPeriodSplitGoesOn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{MaxEntries: 100, ChangeListPeriod: time.Hour})
	wc := &walkCounter{Catalog: f.cat}
	f.srv.cat = wc
	pieces := func() []time.Time {
		t.Helper()
		st, err := f.srv.cat.Stats(ctx, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.srv.pieces(ctx, "alpha", base, st, false)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.logChanges("alpha", base, time.Second, 250)
	if p := pieces(); len(p) != 3 || wc.n != 250 {
		t.Fatalf("first split: %d pieces after walking %d changes, want 3 after 250", len(p), wc.n)
	}
	for _, more := range []int{30, 1, 120} {
		last := f.cat.changes["alpha"][len(f.cat.changes["alpha"])-1].At
		f.logChanges("alpha", last.Add(time.Second), time.Second, more)
		wc.n = 0
		got := pieces()
		if wc.n != more {
			t.Errorf("after %d more changes the split walked %d", more, wc.n)
		}
		whole, _, err := f.srv.split1(ctx, "alpha", base, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, whole.out, time.Time.Equal) {
			t.Fatalf("after %d more: pieces from %v, a whole split gives %v", more, got, whole.out)
		}
	}
	if n := len(f.cat.changes["alpha"]); n != 401 {
		t.Fatalf("%d changes logged, want 401", n)
	}
	lists := readSplit(t, f, 100)
	if len(lists) != 5 || lists[4].entries != 1 {
		t.Errorf("%d lists for 401 changes, want 5 with 1 in the last", len(lists))
	}
}

// sqliteWalkCounter is the real catalog (its counts included), with its
// change walks counted: the changes walked or sized, and of those the
// ones sized in runs taken whole.
type sqliteWalkCounter struct {
	*SQLiteCatalog
	n, whole int
}

func (w *sqliteWalkCounter) Changes(ctx context.Context, coll string, from, until time.Time, fn func(*Record) error) error {
	return w.SQLiteCatalog.Changes(ctx, coll, from, until, func(r *Record) error { w.n++; return fn(r) })
}

func (w *sqliteWalkCounter) ChangeSizes(ctx context.Context, coll string, from, until time.Time, fn func(*catalog.ChangeRun) (bool, error)) error {
	return w.SQLiteCatalog.ChangeSizes(ctx, coll, from, until, func(r *catalog.ChangeRun) (bool, error) {
		whole, err := fn(r)
		if whole {
			w.n += r.Count
			if r.Count > 1 {
				w.whole += r.Count
			}
		}
		return whole, err
	})
}

// TestClosedPeriodCutKeptAcrossRestart: the cut of a closed period, once
// walked, is kept beside the document cache; a server started again on
// the same catalog and directory serves the same pieces without walking
// the period, and one without the kept cut walks it.
func TestClosedPeriodCutKeptAcrossRestart(t *testing.T) {
	ctx := context.Background()
	cacheDir := t.TempDir()
	cfg := Config{MaxEntries: 100, ChangeListPeriod: time.Hour, Cache: CacheConfig{Dir: cacheDir}}
	f := newSQLiteFixture(t, cfg)
	apply := func(at time.Time, i int) {
		ev := &viaduct.Event{Source: "origin", Collection: "alpha", URI: fmt.Sprintf("http://origin.example.com/r%d", i),
			Op: resourcesync.Created, Type: "text/plain", Upstream: viaduct.Change{Source: "origin", Collection: "alpha"}}
		ev.Upstream.URI, ev.Upstream.Op = ev.URI, ev.Op
		f.apply(t, at, ev, []byte(fmt.Sprint(i)))
	}
	for i := range 250 {
		apply(base.Add(time.Duration(i)*time.Second), i)
	}
	apply(base.Add(2*time.Hour), 250) // closes the first period
	lists := readSplit(t, f.fixture, 100)
	var want []time.Time
	for _, l := range lists {
		if l.from.Before(base.Add(time.Hour)) {
			want = append(want, l.from)
		}
	}
	if len(want) != 3 {
		t.Fatalf("the closed period is %d lists, want 3: %+v", len(want), lists)
	}

	restarted := func(dir string) (*Server, *sqliteWalkCounter) {
		t.Helper()
		wc := &sqliteWalkCounter{SQLiteCatalog: FromSQLite(f.cat)}
		c := cfg
		c.BaseURL, c.Collections = f.srv.cfg.BaseURL, f.srv.cfg.Collections
		c.Cache.Dir = dir
		srv, err := New(c, wc, f.store, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return srv, wc
	}
	st, err := f.srv.cat.Stats(ctx, "alpha")
	if err != nil {
		t.Fatal(err)
	}
	srv, wc := restarted(cacheDir)
	got, err := srv.pieces(ctx, "alpha", base, st, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, time.Time.Equal) || wc.n != 0 {
		t.Errorf("after a restart: pieces from %v after walking %d changes, want %v without walking", got, wc.n, want)
	}
	srv, wc = restarted(t.TempDir())
	if got, err = srv.pieces(ctx, "alpha", base, st, true); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, time.Time.Equal) || wc.n != 250 {
		t.Errorf("with no kept cut: pieces from %v after walking %d changes, want %v after 250", got, wc.n, want)
	}
}
