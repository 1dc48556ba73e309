package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/fixity"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/notify"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Options are what a node gets from its caller rather than its file.
type Options struct {
	// Logger receives every role's logs; nil discards them.
	Logger *slog.Logger
	// Version is reported in the User-Agent and in metrics.
	Version string
	// TracerProvider makes every span of the node; nil uses the global
	// one that telemetry.SetupTracing installs.
	TracerProvider trace.TracerProvider
	// OnProgress, when set, receives each progress line of a baseline,
	// as it is logged (the demo draws it on the terminal).
	OnProgress func(harvester.Progress)
}

// tracer is the node's own tracer (the applier's spans).
func (o Options) tracer() trace.Tracer {
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer("github.com/viaduct-mirror/viaduct/node")
}

// Node is one running viaduct process. Start it with Start and stop it with
// Close; every goroutine it starts ends before Close returns.
type Node struct {
	cfg    Config
	log    *slog.Logger
	reg    *prometheus.Registry
	q      *queue.Queue
	blobs  storage.Blobs
	cat    *catalog.Catalog
	roles  *roles
	repub  *republish.Server
	note   *notify.Notifications
	fixity *fixity.Audit
	faults roleFaults
	http   *http.Server
	ln     net.Listener
	url    string

	// The admin listener, and what it reports.
	adminHTTP *http.Server
	adminLn   net.Listener
	adminURL  string
	ready     *Readiness
	reloader  Reloader
	version   string
	started   time.Time
	rates     *rateWindow

	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	closed chan struct{}
	// applied is signalled by the applier after each batch, and read by
	// the notifier.
	applied chan struct{}
	// opts are what the caller gave Start.
	opts Options
	// links carries applied events' trace contexts to the notifications
	// that tell of them.
	links *notify.LinkBook
	// joined says where the catalog came from at start; snapshots writes
	// catalog snapshots (nil when they are off).
	joined    backup.Joined
	snapshots *backup.Snapshots
}

// Start opens the stores, starts every role and listens for HTTP. It
// returns once the node is serving; a failure while starting closes what
// was opened.

// The queue is the applier's event log.
var _ catalog.EventLog = (*queue.Queue)(nil)

func Start(ctx context.Context, cfg Config, opts Options) (n *Node, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n = &Node{cfg: cfg, log: log, reg: prometheus.NewRegistry(), closed: make(chan struct{}),
		ready: NewReadiness(), version: opts.Version, started: time.Now()}
	n.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfo(opts.Version))
	defer func() {
		if err != nil {
			n.Close()
			n = nil
		}
	}()

	if n.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		return n, fmt.Errorf("listen: listening on %s: %w", cfg.Listen, err)
	}
	n.url = strings.TrimSuffix(cfg.PublicURL, "/")
	if n.url == "" {
		n.url = "http://" + n.ln.Addr().String()
	}
	if n.cfg.Republish.BaseURL == "" {
		n.cfg.Republish.BaseURL = n.url
	}

	if err := makeDataDir(&cfg); err != nil {
		return n, err
	}
	qcfg := cfg.Queue
	qcfg.Registerer = n.reg
	if n.q, err = queue.Open(ctx, qcfg, log.With("role", "queue")); err != nil {
		return n, fmt.Errorf("opening queue: %w", err)
	}
	if n.blobs, err = openBlobs(ctx, cfg.Blobs, log, n.reg); err != nil {
		return n, err
	}
	if err = n.openCatalog(ctx); err != nil {
		return n, err
	}

	n.reg.MustRegister(newCatalogCollector(n))
	n.reg.MustRegister(n.diskGauges()...)

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	n.cancel = cancel
	n.applied = make(chan struct{}, 1)
	n.opts, n.links = opts, notify.NewLinkBook()
	n.spawn("wal", func() error { return n.truncateWAL(runCtx) })
	n.rates = newRateWindow(rateSpan)
	n.spawn("rates", func() error { return sampleRates(runCtx, n.rates, n.reg, rateEvery) })
	n.keep(runCtx, "applier", func(ctx context.Context) error {
		return catalog.NewApplier(n.cat, n.q, catalog.ApplierOptions{Log: log.With("role", "applier"), Tracer: opts.tracer(), Spans: n.links, Applied: n.applied}).Run(ctx)
	})

	repub, err := republish.New(n.cfg.Republish, republish.FromSQLite(n.cat), n.blobs, log.With("role", "republish"), n.reg)
	if err != nil {
		return n, fmt.Errorf("starting republisher: %w", err)
	}
	n.repub = repub
	if n.roles, err = startRoles(runCtx, n, opts); err != nil {
		return n, err
	}
	if n.note, err = notify.Start(runCtx, notify.Deps{
		Queue: n.q, Catalog: n.cat, Republish: repub, Registry: n.reg, Log: n.log,
		TracerProvider: opts.TracerProvider, Applied: n.applied, Links: n.links,
		CaughtUp: n.CaughtUp, Spawn: n.spawn,
	}); err != nil {
		return n, err
	}

	dumps, err := startDumps(runCtx, n, repub)
	if err != nil {
		return n, err
	}
	if err := startGC(runCtx, n, repub); err != nil {
		return n, err
	}
	if err := startFixity(runCtx, n); err != nil {
		return n, err
	}
	if err := startSnapshots(runCtx, n); err != nil {
		return n, err
	}
	n.probes()
	if err := n.startPublic(runCtx, repub, dumps, opts); err != nil {
		return n, err
	}
	if err := n.startAdmin(runCtx, dumps); err != nil {
		return n, err
	}
	log.Info("viaduct node started", "url", n.url, "admin_url", n.adminURL, "data_dir", cfg.DataDir, "blobs", cfg.Blobs.Kind, "sources", len(cfg.Sources))
	return n, nil
}

// spawn runs f in a goroutine owned by the node; an error it returns is
// logged and kept for Close.
func (n *Node) spawn(name string, f func() error) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := f(); err != nil {
			n.log.Error("role stopped", "role", name, "err", err)
			n.mu.Lock()
			n.errs = append(n.errs, fmt.Errorf("%s: %w", name, err))
			n.mu.Unlock()
		}
	}()
}

// URL is where the node's republished Source is served.
func (n *Node) URL() string { return n.url }

// Catalog is the node's catalog, for tests and the demo.
func (n *Node) Catalog() *catalog.Catalog { return n.cat }

// Queue is the node's queue, for tests and the demo.
func (n *Node) Queue() *queue.Queue { return n.q }

// Blobs is the node's blob store.
func (n *Node) Blobs() storage.Blobs { return n.blobs }

// CaughtUp reports whether the catalog has applied every event so far.
func (n *Node) CaughtUp(ctx context.Context) (bool, error) { return catalog.CaughtUp(ctx, n.q, n.cat) }

// Close stops every role, then the HTTP server, the catalog and the queue,
// in that order, and returns the errors roles stopped with.
func (n *Node) Close() error {
	select {
	case <-n.closed:
		return nil
	default:
		close(n.closed)
	}
	began := time.Now()
	n.log.Info("viaduct node stopping")
	n.ready.Set("draining", false, "the node is shutting down")
	var errs []error
	// Roles stop first: their context also ends the requests in flight
	// (an admin pass, a long download), so the HTTP server's shutdown
	// waits only for what is quick to finish.
	if n.cancel != nil {
		n.cancel()
	}
	if n.roles != nil {
		errs = append(errs, n.roles.close())
	}
	errs = append(errs, n.note.Close())
	if n.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, n.http.Shutdown(ctx))
		cancel()
	} else if n.ln != nil {
		n.ln.Close()
	}
	// The admin listener stops last, so that /readyz says "draining"
	// until the public side has stopped.
	if n.adminHTTP != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs = append(errs, n.adminHTTP.Shutdown(ctx))
		cancel()
	} else if n.adminLn != nil {
		n.adminLn.Close()
	}
	n.wg.Wait()
	if c, ok := n.blobs.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if n.cat != nil {
		errs = append(errs, n.cat.Close())
	}
	if n.q != nil {
		errs = append(errs, n.q.Close())
	}
	n.mu.Lock()
	errs = append(errs, n.errs...)
	n.mu.Unlock()
	err := errors.Join(errs...)
	n.log.Info("viaduct node stopped", "took", time.Since(began).Round(time.Millisecond), "clean", err == nil)
	return err
}

// Run starts a node and serves until ctx ends, then drains: not ready at
// once, serving for health.shutdown_grace, then closed.
func Run(ctx context.Context, cfg Config, opts Options) error {
	n, err := Start(ctx, cfg, opts)
	if err != nil {
		return err
	}
	<-ctx.Done()
	n.Drain()
	return n.Close()
}

// Drain marks the node not ready and keeps it serving for
// health.shutdown_grace, so that load balancers stop sending it requests
// before Close stops it.
func (n *Node) Drain() {
	n.ready.Set("draining", false, "the node is shutting down")
	n.log.Info("draining: not ready, serving until the grace period ends", "grace", n.cfg.Health.ShutdownGrace)
	if g := n.cfg.Health.ShutdownGrace; g > 0 {
		time.Sleep(g)
	}
}
