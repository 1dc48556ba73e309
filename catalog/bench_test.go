package catalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
)

// benchEvents makes n events: three quarters create new resources, the rest
// update earlier ones, as a harvest in progress does.
func benchEvents(n int) []Applied {
	out := make([]Applied, n)
	for i := range out {
		k := i
		if i%4 == 3 {
			k = i / 2
		}
		var ev *viaduct.Event = event("s1", "c", fmt.Sprintf("http://s1/items/%08d", k), cr, fmt.Sprint(i))
		out[i] = Applied{Seq: uint64(i + 1), At: t0.Add(time.Duration(i) * time.Microsecond), Event: ev}
	}
	return out
}

// BenchmarkApply measures events applied per second, one transaction per
// event and in bursts as the applier reads them. Each b.N is one event;
// run with -benchtime=100000x for the 100,000-event figure.
func BenchmarkApply(b *testing.B) {
	for _, size := range []int{1, 32, 100, 1000} {
		name := fmt.Sprintf("batch=%d", size)
		if size == 1 {
			name = "one-per-tx"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			c := openTemp(b)
			evs := benchEvents(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < len(evs); i += size {
				if err := c.ApplyBatch(ctx, evs[i:min(i+size, len(evs))]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if n := lastApplied(b, c); n != uint64(b.N) {
				b.Fatalf("LastApplied = %d, want %d", n, b.N)
			}
		})
	}
}

// BenchmarkResources measures streaming a collection's Resource List.
func BenchmarkResources(b *testing.B) {
	ctx := context.Background()
	c := openTemp(b)
	const n = 20000
	fill(b, c, "s1", "c", 1, n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got := 0
		if err := c.Resources(ctx, "c", "", 0, func(*Resource) error { got++; return nil }); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("listed %d, want %d", got, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
