package queue_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// BenchmarkPublishChange measures queuing distinct changes, each waiting
// for its PubAck (file store, one replica).
func BenchmarkPublishChange(b *testing.B) {
	q := queuetest.Start(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkTakeAndAck measures one worker's Next plus a confirmed Ack.
func BenchmarkTakeAndAck(b *testing.B) {
	q := queuetest.Start(b)
	ctx := context.Background()
	for i := range b.N {
		if err := q.PublishChange(ctx, testChange(i)); err != nil {
			b.Fatal(err)
		}
	}
	s, err := q.Changes(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m, err := s.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Ack(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}

// BenchmarkEventsReplay measures an applier catching up from seq 1.
func BenchmarkEventsReplay(b *testing.B) {
	q := queuetest.Start(b)
	ctx := context.Background()
	for i := range b.N {
		if _, err := q.PublishEvent(ctx, testEvent(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n := 0
	err := q.Events(rctx, 1, func(context.Context, uint64, time.Time, *viaduct.Event) error {
		if n++; n == b.N {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != b.N {
		b.Fatalf("replayed %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEventsOnDisk measures what an event takes in EVENTS' message
// blocks on disk, compressed (queue.events_compression: s2, the default)
// and as written (none), for a repository's resources: 80-byte URIs of
// bitstream UUIDs, both digests (the upstream md5 alone, as DSpace
// declares it), a describedby link to the item's metadata, a lastmod.
// b.N events are published, then the server is stopped and its blocks
// measured; the block being written when it stops is never compressed,
// so a run of several blocks (-benchtime 40000x) shows the rate:
//
//	go test -run '^$' -bench EventsOnDisk -benchtime 40000x ./queue
func BenchmarkEventsOnDisk(b *testing.B) {
	for _, comp := range []string{"s2", "none"} {
		b.Run(comp, func(b *testing.B) {
			cfg := queuetest.Config(b)
			cfg.EventsCompression = comp
			q, err := queue.Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			evs := repositoryEvents(b.N)
			b.ResetTimer()
			queuetest.PublishEvents(b, q, evs)
			b.StopTimer()
			q.Close()
			bytes, blocks := eventsOnDisk(b, cfg.Dir)
			b.ReportMetric(float64(bytes)/float64(b.N), "disk-B/event")
			b.ReportMetric(float64(blocks), "blocks")
		})
	}
}

// repositoryEvents makes n events of new bitstreams of a repository.
func repositoryEvents(n int) []*viaduct.Event {
	rng := rand.New(rand.NewPCG(7, 8))
	types := []string{"application/pdf", "application/pdf", "image/jpeg", "text/plain", "image/tiff", "application/zip"}
	listed := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	uuid := func() string {
		var id [16]byte
		binary.LittleEndian.PutUint64(id[:8], rng.Uint64())
		binary.LittleEndian.PutUint64(id[8:], rng.Uint64())
		h := hex.EncodeToString(id[:])
		return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	evs := make([]*viaduct.Event, n)
	for i := range evs {
		uri := "https://repo.example.org/server/api/core/bitstreams/" + uuid() + "/content"
		s, m := sha256.Sum256([]byte(uri)), md5.Sum([]byte(uri))
		length := 1000 + rng.Int64N(20<<20)
		typ := types[rng.IntN(len(types))]
		mod := listed.Add(-time.Duration(rng.Int64N(5*365*24*3600)) * time.Second)
		ev := &viaduct.Event{Source: "repo", Collection: "repo", URI: uri, Op: resourcesync.Created,
			SHA256: hex.EncodeToString(s[:]), MD5: hex.EncodeToString(m[:]), Length: length, Type: typ}
		ev.Upstream = viaduct.Change{Source: "repo", Collection: "repo", URI: uri, Op: resourcesync.Created,
			Time: mod, Modified: mod, Listed: listed, Length: &length, Type: typ,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: ev.MD5}},
			Links: []resourcesync.Link{{Rel: "describedby", Type: "application/xml",
				Href: "https://repo.example.org/server/api/core/items/" + uuid() + "/metadata"}}}
		evs[i] = ev
	}
	return evs
}

// BenchmarkEventsPath measures the CPU the whole process (the embedded
// server with it) spends on each event's way through EVENTS: encoded and
// published by 8 workers as PublishEventAsync does, each awaiting the
// server's acknowledgement as a fetch worker does, then read in order by
// an ordered consumer and decoded, as the catalog's reader does. per=1 is
// EVENTS as it is, an event a message; per=16 sends the same events 16 to
// a message, one a line, a wire form EVENTS does not have, to size what
// grouping them would save (docs/benchmarks.md, "Small bitstreams"):
//
//	go test -run '^$' -bench EventsPath -benchtime 100000x ./queue
func BenchmarkEventsPath(b *testing.B) {
	for _, per := range []int{1, 16} {
		b.Run(fmt.Sprintf("per=%d", per), func(b *testing.B) {
			q := queuetest.Start(b)
			js := q.JetStream()
			evs := repositoryEvents(b.N)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cons, err := js.OrderedConsumer(ctx, queue.StreamEvents, jetstream.OrderedConsumerConfig{})
			if err != nil {
				b.Fatal(err)
			}
			user0, sys0 := testutil.CPUTimes(b)
			b.ResetTimer()
			read := make(chan error, 1)
			go func() {
				it, err := cons.Messages()
				if err != nil {
					read <- err
					return
				}
				defer it.Stop()
				// A publisher that fails ends the run: the reader would
				// wait for its events until the deadline.
				stop := context.AfterFunc(ctx, it.Stop)
				defer stop()
				for n := 0; n < len(evs); {
					msg, err := it.Next()
					if err != nil {
						read <- err
						return
					}
					for line := range bytes.SplitSeq(msg.Data(), []byte{'\n'}) {
						var ev viaduct.Event
						if err := ev.Decode(line); err != nil {
							read <- err
							return
						}
						n++
					}
				}
				read <- nil
			}()
			var next atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for {
						i := int(next.Add(int64(per))) - per
						if i >= len(evs) {
							return
						}
						var data []byte
						for _, ev := range evs[i:min(i+per, len(evs))] {
							line, err := ev.Encode()
							if err != nil {
								b.Error(err)
								cancel()
								return
							}
							if len(data) > 0 {
								data = append(data, '\n')
							}
							data = append(data, line...)
						}
						msg := nats.NewMsg(queue.EventSubject(evs[i].Collection))
						msg.Data = data
						f, err := js.PublishMsgAsync(msg, jetstream.WithExpectStream(queue.StreamEvents))
						if err != nil {
							b.Error(err)
							cancel()
							return
						}
						select {
						case <-f.Ok():
						case err := <-f.Err():
							b.Error(err)
							cancel()
							return
						}
					}
				})
			}
			wg.Wait()
			if err := <-read; err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			user1, sys1 := testutil.CPUTimes(b)
			b.ReportMetric(float64((user1-user0+sys1-sys0).Microseconds())/float64(b.N), "cpu-us/event")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
