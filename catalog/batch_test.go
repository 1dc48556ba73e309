package catalog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// mixedEvents makes n events over a pool of URIs in two collections, as
// a busy Source and slow workers produce them: creations, updates (some
// with a copy already held), deletions (some of resources never held),
// Source times out of order, ties, and events without one.
func mixedEvents(n int) []Applied {
	rng := rand.New(rand.NewPCG(7, 8))
	ops := []string{cr, upd, upd, del}
	out := make([]Applied, n)
	for i := range out {
		coll := "c"
		if rng.IntN(4) == 0 {
			coll = "d"
		}
		uri := fmt.Sprintf("http://s1/r/%d", rng.IntN(150))
		op := ops[rng.IntN(len(ops))]
		content := ""
		if op != del {
			content = fmt.Sprint("v", rng.IntN(3))
		}
		ev := event("s1", coll, uri, op, content)
		switch rng.IntN(8) {
		case 0:
			ev.Upstream.Time = time.Time{}
		case 1:
			ev.Upstream.Listed = src(rng.IntN(40))
		}
		if !ev.Upstream.Time.IsZero() {
			ev.Upstream.Time = src(rng.IntN(40))
		}
		// Stream times tie and step back now and then.
		at := t0.Add(time.Duration(i/3) * time.Millisecond)
		out[i] = Applied{Seq: uint64(i + 1), At: at, Event: ev}
	}
	return out
}

// dumpTables renders every row of every table the apply path writes,
// each column as stored.
func dumpTables(t *testing.T, c *Catalog) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT * FROM resources ORDER BY collection, uri`,
		`SELECT * FROM changes ORDER BY seq`,
		`SELECT * FROM collections ORDER BY name`,
		`SELECT * FROM applied`,
	} {
		rows, err := c.writer.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if p, ok := v.([]byte); ok {
					v = fmt.Sprintf("%x", p)
				}
				fmt.Fprintf(&b, "%s=%v ", cols[i], v)
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// TestBatchRowsMatchOneByOne: a batch keeps each row in memory from one
// event to the next and writes it once; the catalog must end exactly as
// when every event is read back from the file by the next. Batches of up
// to 300 events over 150 URIs name the same row many times.
func TestBatchRowsMatchOneByOne(t *testing.T) {
	ctx := context.Background()
	evs := mixedEvents(1500)
	one, batched := openTemp(t), openTemp(t)
	for i := range evs {
		if err := one.ApplyBatch(ctx, evs[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < len(evs); {
		n := 1 + rng.IntN(300)
		if err := batched.ApplyBatch(ctx, evs[i:min(i+n, len(evs))]); err != nil {
			t.Fatal(err)
		}
		i += n
	}
	a, b := dumpTables(t, one), dumpTables(t, batched)
	if a != b {
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Fatalf("batched catalog differs from one by one at row %d:\n one %s\nbatch %s", i, al[i], bl[i])
			}
		}
		t.Fatalf("batched catalog has %d rows, one by one %d", len(bl), len(al))
	}
	if one.Outranked() != batched.Outranked() || one.Outranked() == 0 {
		t.Errorf("outranked: one by one %d, batched %d; want equal and not 0", one.Outranked(), batched.Outranked())
	}
	var tombs, held int
	if err := one.writer.QueryRow(`SELECT count(*) FILTER (WHERE seq = 0), count(*) FILTER (WHERE deleted = 0) FROM resources`).
		Scan(&tombs, &held); err != nil {
		t.Fatal(err)
	}
	if tombs == 0 || held == 0 {
		t.Errorf("the events left %d tombstones and %d held: the test does not cover both", tombs, held)
	}
}

// TestApplyBatchCancelled: a batch whose context has ended applies
// nothing.
func TestApplyBatchCancelled(t *testing.T) {
	c := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.ApplyBatch(ctx, []Applied{{Seq: 1, At: t0, Event: event("s1", "c", "http://s1/a", cr, "a")}})
	if err == nil {
		t.Fatal("ApplyBatch with an ended context: no error")
	}
	if n := lastApplied(t, c); n != 0 {
		t.Errorf("LastApplied = %d after a cancelled batch, want 0", n)
	}
}
