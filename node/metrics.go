package node

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// catalogCollector reports the catalog's gauges on every scrape, read from
// the catalog itself so they can never drift from what it holds.
type catalogCollector struct {
	n *Node

	resources, bytes, changes, applied, lag, outranked *prometheus.Desc
}

func newCatalogCollector(n *Node) *catalogCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("viaduct", "catalog", name), help, nil, nil)
	}
	return &catalogCollector{
		n:         n,
		resources: d("resources", "Resources the catalog holds now, all collections."),
		bytes:     d("bytes", "Bytes of the resources the catalog holds now."),
		changes:   d("changes", "Length of the aggregator's change log."),
		applied:   d("last_applied_seq", "EVENTS sequence of the last event applied to the catalog."),
		lag:       d("lag_events", "Events published on EVENTS and not yet applied to this node's catalog."),
		outranked: prometheus.NewDesc("viaduct_catalog_outranked_events_total",
			"Events applied without effect because the catalog already held a later change of the same resource (workers finished out of order).", nil, nil),
	}
}

func (c *catalogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.resources, c.bytes, c.changes, c.applied, c.lag, c.outranked} {
		ch <- d
	}
}

func (c *catalogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.n.cat.Stats(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.resources, prometheus.GaugeValue, float64(st.Resources))
	ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.GaugeValue, float64(st.Bytes))
	ch <- prometheus.MustNewConstMetric(c.changes, prometheus.GaugeValue, float64(st.Changes))
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(st.LastApplied))
	ch <- prometheus.MustNewConstMetric(c.outranked, prometheus.CounterValue, float64(c.n.cat.Outranked()))
	// While NATS is away the queue reports the last EVENTS sequence it
	// read (viaduct_queue_stats_stale says so): the lag is then a floor,
	// reported rather than missing.
	qs, _ := c.n.q.Stats(ctx)
	var lag uint64
	if qs.EventsLastSeq > st.LastApplied {
		lag = qs.EventsLastSeq - st.LastApplied
	}
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(lag))
}

// buildInfo is viaduct_build_info: always 1, its labels say which build
// runs, so a dashboard can show versions and an alert can join on them.
func buildInfo(version string) prometheus.Collector {
	revision, modified := "unknown", "false"
	goversion := runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	if version == "" {
		version = "dev"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "viaduct_build_info",
		Help:        "Always 1; the labels name the running build: version, goversion, revision (git commit) and modified (a build from a changed tree).",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goversion, "revision": revision, "modified": modified},
	})
	g.Set(1)
	return g
}
