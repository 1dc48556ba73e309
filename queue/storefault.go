package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// Recovery of the embedded JetStream store. When a write to its file store
// fails (a full disk), nats-server marks the stream's store failed and
// every later write to it fails too, or disables JetStream altogether; it
// never retries by itself, and only a restart of JetStream reloads the
// stores from disk. The guard notices (the server's error lines, and
// JetStream found disabled), waits until the store directory takes a
// probe write again, and then restarts JetStream inside the process: the
// streams and consumers are read back from their files, the connection
// stays up, and publishers and consumers carry on. Until then StoreFault
// says why the queue cannot store.
const (
	// guardPoll is how often the guard checks that JetStream is enabled.
	guardPoll = time.Second
	// guardFirst and guardMax bound the backoff between probes of a full
	// store directory.
	guardFirst = 250 * time.Millisecond
	guardMax   = 10 * time.Second
	// guardProbe is how much a probe writes: room for the streams' next
	// blocks of writes, so that JetStream is not restarted into a store
	// that fails again at once.
	guardProbe = 1 << 20
)

// storeGuard watches one embedded server's JetStream store. Its goroutine
// runs from start until close.
type storeGuard struct {
	srv  *server.Server
	jcfg server.JetStreamConfig
	dir  string
	log  *slog.Logger

	// tidy runs after each restart, and once more tidyLater after it.
	tidy      func()
	tidyLater time.Duration
	tidyAgain time.Time
	wake      chan struct{} // a write error was logged (buffered, 1)
	stop      chan struct{}
	done      chan struct{}

	mu       sync.Mutex
	fault    string // why the store cannot be written; "" when it can
	restarts int
	// epoch moves once when a fault begins and once when it ends: odd
	// while the store has a fault (see Queue.StoreEpoch).
	epoch atomic.Uint64
}

func newStoreGuard(dir string, log *slog.Logger) *storeGuard {
	return &storeGuard{dir: dir, log: log, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// storeWriteError reports whether a line nats-server logged says that its
// store could not be written and will not be until JetStream restarts.
func storeWriteError(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "critical write error") ||
		strings.Contains(m, "will be disabled") ||
		strings.Contains(m, "disabling jetstream") ||
		strings.Contains(m, "no space left on device")
}

// noticed is called with each error line of the server.
func (g *storeGuard) noticed(msg string) {
	if g == nil || !storeWriteError(msg) {
		return
	}
	g.setFault(msg)
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

func (g *storeGuard) setFault(msg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fault == "" {
		g.fault = msg
		g.epoch.Add(1)
	}
}

// start begins watching srv, which runs JetStream as jcfg says.
func (g *storeGuard) start(srv *server.Server, jcfg server.JetStreamConfig) {
	g.srv, g.jcfg = srv, jcfg
	go g.run()
}

func (g *storeGuard) close() {
	if g == nil || g.srv == nil {
		return
	}
	close(g.stop)
	<-g.done
}

func (g *storeGuard) run() {
	defer close(g.done)
	tick := time.NewTicker(guardPoll)
	defer tick.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-g.wake:
		case now := <-tick.C:
			if !g.tidyAgain.IsZero() && now.After(g.tidyAgain) {
				g.tidyAgain = time.Time{}
				g.tidy()
			}
			if g.srv.JetStreamEnabled() {
				continue
			}
			g.setFault("JetStream is disabled")
		}
		g.recover()
	}
}

// recover probes the store directory with backoff until it takes a
// write, then restarts JetStream; it returns once JetStream runs again
// (or the guard is closed).
func (g *storeGuard) recover() {
	g.log.Error("JetStream cannot write its store; restarting it once the store directory can be written", "dir", g.dir, "err", g.Fault())
	wait := guardFirst
	for {
		t := time.NewTimer(wait)
		select {
		case <-g.stop:
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, guardMax)
		if err := probeWrite(g.dir); err != nil {
			g.log.Debug("store directory still cannot be written", "dir", g.dir, "err", err)
			continue
		}
		if err := g.restart(); err != nil {
			g.log.Warn("restarting JetStream failed; trying again", "dir", g.dir, "err", err)
			continue
		}
		// A write error logged while restarting was about the old
		// stores; the new ones start clean.
		select {
		case <-g.wake:
		default:
		}
		g.mu.Lock()
		if g.fault != "" {
			g.fault = ""
			g.epoch.Add(1)
		}
		g.restarts++
		g.mu.Unlock()
		g.log.Info("JetStream restarted in process; its store can be written again", "dir", g.dir)
		if g.tidy != nil {
			g.tidy()
			g.tidyAgain = time.Now().Add(g.tidyLater)
		}
		return
	}
}

// restart stops JetStream (if the server has not already) and starts it
// again on the same store, as the server does at start.
func (g *storeGuard) restart() error {
	if g.srv.JetStreamEnabled() {
		if err := g.srv.ShutdownJetStream(); err != nil {
			return fmt.Errorf("queue: stop JetStream: %w", err)
		}
	}
	cfg := g.jcfg
	if err := g.srv.EnableJetStream(&cfg); err != nil {
		return fmt.Errorf("queue: start JetStream again in %s: %w", g.dir, err)
	}
	if !g.srv.JetStreamEnabled() {
		return errors.New("queue: JetStream did not start again")
	}
	return nil
}

// tidyChanges removes from CHANGES the messages below its consumer's ack
// floor: acknowledged, but kept because the store could not write their
// removal when they were acknowledged, and read back when JetStream
// restarted. No consumer would ever deliver them again; they would only
// count as a backlog. It runs in the guard's goroutine, after a restart.
func (q *Queue) tidyChanges() {
	if q.consumer == nil || q.changes == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ci, err := q.consumer.Info(ctx)
	if err != nil {
		q.log.Warn("reading the CHANGES consumer after restarting JetStream", "err", err)
		return
	}
	floor := ci.AckFloor.Stream
	if floor == 0 {
		return
	}
	if err := q.changes.Purge(ctx, jetstream.WithPurgeSequence(floor+1)); err != nil {
		q.log.Warn("removing acknowledged changes after restarting JetStream", "below", floor+1, "err", err)
	}
}

// probeWrite writes guardProbe bytes in dir and removes them.
func probeWrite(dir string) (err error) {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	defer func() {
		f.Close()
		if rerr := os.Remove(f.Name()); err == nil {
			err = rerr
		}
	}()
	if _, err := f.Write(make([]byte, guardProbe)); err != nil {
		return err
	}
	return f.Sync()
}

// Fault says why the store cannot be written, or "" when it can.
func (g *storeGuard) Fault() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.fault
}

// StoreEpoch moves once when the embedded store's fault begins and once
// when it ends: it is odd while the store has a fault. A publish that
// failed while the epoch moved, or began or ended odd, failed because of
// the store, even when JetStream has been restarted since and StoreFault
// is nil again: its acknowledgement was lost in the restart. It is one
// atomic read, cheap enough to take before every publish. Always 0 on an
// external cluster.
func (q *Queue) StoreEpoch() uint64 {
	if q.guard == nil {
		return 0
	}
	return q.guard.epoch.Load()
}

// StoreFault is nil while the queue can store messages; on an embedded
// server whose store could not be written (a full disk) it says why,
// until JetStream has been restarted on a store that can be written
// again. On an external cluster it is always nil.
func (q *Queue) StoreFault() error {
	if f := q.guard.Fault(); f != "" {
		return fmt.Errorf("JetStream store %s cannot be written (restarting JetStream once it can): %s", filepath.Clean(q.cfg.Dir), f)
	}
	return nil
}
