package fetch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/sim"
)

// BenchmarkFetch10k measures the whole path of a change: pull from
// CHANGES, GET from the simulated Source over loopback HTTP, hash and
// write into a directory store, publish on EVENTS, ack. Each iteration
// drains 10,000 changes of 1 KiB into a fresh queue and store.
func BenchmarkFetch10k(b *testing.B) {
	const n = 10000
	srv := startSim(b, sim.Config{Resources: n, MinSize: 1024, MaxSize: 1024})
	changes := simChanges(b, srv)
	for _, workers := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				q := startQueue(b)
				store, _ := dirStore(b)
				publishAll(b, q, changes)
				cfg := testConfig()
				cfg.Workers = workers
				p, err := New(cfg, queueDeps(b, q, store, clientsFor(b, srv)), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				start := time.Now()
				b.StartTimer()
				go func() { done <- p.Run(context.Background()) }()
				for streamMsgs(b, q, queue.StreamEvents) < n || streamMsgs(b, q, queue.StreamChanges) > 0 {
					time.Sleep(5 * time.Millisecond)
				}
				elapsed += time.Since(start)
				b.StopTimer()
				p.Close()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				q.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "changes/s")
			b.ReportMetric(float64(n*b.N*1024)/elapsed.Seconds()/1e6, "MB/s")
		})
	}
}
