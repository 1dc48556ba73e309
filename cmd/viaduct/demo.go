package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

// runDemo runs a whole node on its embedded defaults against a simulated
// Source in the same process, so that viaduct can be seen harvesting with
// no network and no configuration.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "[flags]", stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "`address` of the republished Source, metrics and health")
	dataDir := fs.String("data", "", "data `directory` (default: a new temporary directory, removed on exit)")
	resources := fs.Int("resources", 1000, "resources the simulated Source starts with")
	rate := fs.Float64("rate", 2, "changes per second the simulated Source makes")
	every := fs.Duration("poll", 10*time.Second, "how often the Source's Change List is polled")
	duration := fs.Duration("duration", 0, "stop after this long (0: run until interrupted)")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, node.LogConfig{Level: *level, Format: "text"})
	if err != nil {
		return err
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if *dataDir == "" {
		d, err := os.MkdirTemp("", "viaduct-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*dataDir = d
	}

	src, err := sim.New(sim.Config{Resources: *resources, Seed: 1, Rate: *rate, Period: time.Minute})
	if err != nil {
		return err
	}
	up, err := sim.Listen("127.0.0.1:0", src, nil)
	if err != nil {
		return err
	}
	defer up.Close()
	go src.Run(ctx)

	allow := true
	cfg := node.Defaults()
	cfg.DataDir = filepath.Clean(*dataDir)
	cfg.Listen = *listen
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Admin.AllowNoTokenOnLoopback = true
	cfg.Upstream.AllowLoopback = true
	// The simulated Source is on this machine: no need for the politeness
	// a real Source's operator would expect.
	cfg.Upstream.PerHostRate = 1000
	cfg.Upstream.PerHostBurst = 100
	cfg.Upstream.PerHostConcurrency = 16
	cfg.Sources = []harvester.SourceConfig{{
		Name:          "sim",
		URL:           up.URL,
		Schedule:      fmt.Sprintf("@every %s", *every),
		AllowLoopback: &allow,
	}}
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		return err
	}

	line := newLiveLine(stdout)
	n, err := node.Start(ctx, cfg, node.Options{Logger: log, Version: version, OnProgress: line.show})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, `viaduct demo is running.
  simulated upstream Source:   %s/.well-known/resourcesync (%d resources, %.1f changes/s)
  viaduct's republished Source: %s/.well-known/resourcesync
  status page:                 %s/
  metrics:                     %s/metrics
  data directory:              %s
Press Ctrl-C to stop.
`, up.URL, *resources, *rate, n.URL(), n.AdminURL(), n.AdminURL(), cfg.DataDir)
	reportProgress(ctx, n, src, log)
	line.end()
	return n.Close()
}

// reportProgress logs, every few seconds until ctx ends, how far the
// aggregator's copy is from the Source.
func reportProgress(ctx context.Context, n *node.Node, src *sim.Source, log *slog.Logger) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := n.Catalog().Stats(ctx)
		if err != nil {
			continue
		}
		live := 0
		for _, it := range src.Snapshot() {
			if !it.Deleted {
				live++
			}
		}
		log.Info("progress", "source_resources", live, "mirrored_resources", st.Resources, "mirrored_bytes", st.Bytes, "last_event_seq", st.LastApplied)
	}
}
