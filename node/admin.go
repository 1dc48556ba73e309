package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/notify"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Reloader re-reads the configuration and applies what can change while
// the node runs; the command sets it (SIGHUP and POST /admin/reload).
type Reloader func(ctx context.Context) (any, error)

// startAdmin serves the admin listener: the admin API and status page,
// /metrics, pprof and the health probes.
func (n *Node) startAdmin(ctx context.Context, dumps *republish.Dumps) error {
	var d admin.Dumps
	if dumps != nil {
		d = dumps
	}
	srv, err := admin.New(n.cfg.Admin, admin.Deps{
		Harvester:   n.roles.harv,
		DeadLetters: n.q,
		Dumps:       d,
		Reload:      n.reload,
		Node:        n.info,
		Gatherer:    n.reg,
		Health:      healthHandler(n.ready),
		Metrics:     promhttp.HandlerFor(n.reg, promhttp.HandlerOpts{}),
		Backup:      n.backupServer(),
	}, n.log.With("role", "admin"))
	if err != nil {
		return fmt.Errorf("starting admin listener: %w", err)
	}
	if n.adminLn, err = net.Listen("tcp", n.cfg.Admin.Listen); err != nil {
		return fmt.Errorf("admin.listen: listening on %s: %w", n.cfg.Admin.Listen, err)
	}
	n.adminURL = "http://" + n.adminLn.Addr().String()
	n.adminHTTP = &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          n.httpErrorLog(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	n.spawn("admin http", func() error {
		if err := n.adminHTTP.Serve(n.adminLn); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

// SetReloader sets what POST /admin/reload and SIGHUP run.
func (n *Node) SetReloader(r Reloader) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reloader = r
}

func (n *Node) reload(ctx context.Context) (any, error) {
	n.mu.Lock()
	r := n.reloader
	n.mu.Unlock()
	if r == nil {
		return nil, errors.New("this node was started without a configuration file to reload")
	}
	return r(ctx)
}

// AdminURL is where the admin listener serves.
func (n *Node) AdminURL() string { return n.adminURL }

// Readiness is the node's readiness registry, for roles to add conditions.
func (n *Node) Readiness() *Readiness { return n.ready }

// probes registers the readiness conditions every node has.
func (n *Node) probes() {
	n.ready.Probe("nats", func(ctx context.Context) error {
		if !n.q.Conn().IsConnected() {
			return fmt.Errorf("not connected to NATS (%s)", n.q.Conn().Status())
		}
		if _, err := n.q.JetStream().AccountInfo(ctx); err != nil {
			return fmt.Errorf("JetStream does not answer: %w", err)
		}
		return nil
	})
	n.ready.Probe("nats store", func(context.Context) error { return n.q.StoreFault() })
	// The fetch workers' view: a write that failed, until a probe write
	// succeeds (a full disk answers a Stat, and takes no bytes).
	n.ready.Probe("blob writes", func(context.Context) error {
		if n.roles == nil || n.roles.pool == nil {
			return nil
		}
		return n.roles.pool.StoreFault()
	})
	n.ready.Probe("blobs", func(ctx context.Context) error {
		_, err := n.blobs.Stat(ctx, probeKey)
		if err == nil || errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("%s blob store: %w", n.cfg.Blobs.Kind, err)
	})
	n.ready.Probe("catalog", func(ctx context.Context) error {
		last, err := n.q.LastEventSeq(ctx)
		if err != nil {
			return fmt.Errorf("reading EVENTS: %w", err)
		}
		applied, err := n.cat.LastApplied(ctx)
		if err != nil {
			return fmt.Errorf("reading the catalog: %w", err)
		}
		if last > applied && last-applied > n.cfg.Health.MaxCatalogLag {
			return fmt.Errorf("catalog is %d events behind EVENTS (health.max_catalog_lag %d)", last-applied, n.cfg.Health.MaxCatalogLag)
		}
		return nil
	})
}

// probeKey is a blob key no blob has: asking for it shows the store
// answers without reading anything.
const probeKey = "0000000000000000000000000000000000000000000000000000000000000000"

// info is the node as the status page shows it.
func (n *Node) info(ctx context.Context) admin.NodeInfo {
	ni := admin.NodeInfo{Name: n.q.NodeName(), Version: n.version, Started: n.started, Disk: n.diskInfo(), Rates: n.rateInfo()}
	ok, conds := n.ready.Check(ctx)
	ni.Ready = ok
	for _, c := range conds {
		ni.Conditions = append(ni.Conditions, admin.Condition{Name: c.Name, OK: c.Ready, Reason: c.Reason})
	}
	nc := n.q.Conn()
	ni.NATS = admin.NATSInfo{Connected: nc.IsConnected(), URL: nc.ConnectedUrlRedacted(), Embedded: n.q.ClientURL() != ""}
	if ni.NATS.Embedded {
		ni.NATS.URL = n.q.ClientURL()
	}
	for _, name := range []string{queue.StreamChanges, queue.StreamEvents, queue.StreamDead, queue.StreamHubOut} {
		s, err := n.q.JetStream().Stream(ctx, name)
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) && name != queue.StreamHubOut {
				ni.NATS.Error = err.Error()
			}
			continue
		}
		st := s.CachedInfo().State
		ni.NATS.Streams = append(ni.NATS.Streams, admin.StreamDepth{Name: name, Messages: st.Msgs, Bytes: st.Bytes})
	}
	ni.Blobs = admin.BlobsInfo{Kind: n.cfg.Blobs.Kind, Where: n.shortPath(n.cfg.Blobs.Dir), Reachable: true}
	if n.cfg.Blobs.Kind == "s3" {
		ni.Blobs.Where = n.cfg.Blobs.S3.Endpoint + "/" + n.cfg.Blobs.S3.Bucket
	}
	for _, c := range conds {
		if c.Name == "blobs" && !c.Ready {
			ni.Blobs.Reachable, ni.Blobs.Error = false, c.Reason
		}
	}
	if st, err := n.cat.Stats(ctx); err != nil {
		ni.Catalog.Error = err.Error()
	} else {
		ni.Catalog = admin.CatalogInfo{Resources: st.Resources, Bytes: st.Bytes, Changes: st.Changes, LastApplied: st.LastApplied}
		if last, err := n.q.LastEventSeq(ctx); err == nil {
			ni.Catalog.LastEvent = last
			if last > st.LastApplied {
				ni.Catalog.Lag = last - st.LastApplied
			}
		} else {
			ni.Catalog.Error = err.Error()
		}
	}
	ni.Subscribers = subscribers(ctx, n.note)
	return ni
}

// shortPath writes a path inside the data directory (data_dir) from
// there: the page then reads the same on every node, and shows no more of
// the machine's layout than the configuration does.
func (n *Node) shortPath(dir string) string {
	rel, err := filepath.Rel(n.cfg.DataDir, dir)
	switch {
	case err != nil || strings.HasPrefix(rel, ".."):
		return dir
	case rel == ".":
		return "<data_dir>"
	}
	return "<data_dir>/" + rel
}

// rateInfo is what the fetch workers stored over the last minutes.
func (n *Node) rateInfo() admin.Rates {
	if n.rates == nil {
		return admin.Rates{}
	}
	res, over, ok := n.rates.rate(rateResources)
	byt, _, _ := n.rates.rate(rateBytes)
	return admin.Rates{Known: ok, Over: admin.Duration(over), Resources: res, Bytes: byt}
}

// subscribers lists the hub's downstream subscriptions and what waits
// for each; none with an external hub or notifications off.
func subscribers(ctx context.Context, note *notify.Notifications) []admin.Subscriber {
	var out []admin.Subscriber
	for _, s := range note.Subscribers(ctx) {
		out = append(out, admin.Subscriber{Topic: s.Topic, Callback: s.Callback, Expires: s.Expires, Queued: s.Queued})
	}
	return out
}
