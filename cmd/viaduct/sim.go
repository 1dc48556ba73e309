package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// runSim serves a simulated ResourceSync Source in the foreground until ctx
// ends (a signal), logging every request.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", "[flags]", stderr)
	listen := fs.String("listen", "127.0.0.1:8081", "address to serve on")
	var cfg sim.Config
	fs.IntVar(&cfg.Resources, "resources", 1000, "resources at start")
	fs.Float64Var(&cfg.Rate, "rate", 0, "changes per second (0: none)")
	fs.Int64Var(&cfg.Seed, "seed", 1, "seed of content, sizes and changes")
	fs.StringVar(&cfg.TimeForm, "time-form", sim.Form11, `"1.0" (change time in lastmod) or "1.1" (rs:md datetime)`)
	fs.Int64Var(&cfg.MinSize, "min-size", 256, "smallest bitstream, bytes")
	fs.Int64Var(&cfg.MaxSize, "max-size", 4096, "largest bitstream, bytes")
	fs.DurationVar(&cfg.Period, "period", time.Hour, "time one closed Change List covers")
	fs.IntVar(&cfg.PartSize, "part-size", 50000, "entries per Resource List before an Index")
	hashes := fs.String("hashes", "md5,sha-256", "hash algorithms declared, comma-separated")
	fs.BoolVar(&cfg.NoChangeLists, "no-changelists", false, "offer no Change Lists")
	withHub := fs.Bool("hub", false, "run a WebSub hub at /hub that pushes every change as a change notification")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	cfg.Hashes = strings.Split(*hashes, ",")
	log := slog.New(slog.NewTextHandler(stderr, nil))

	src, err := sim.New(cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	srv, err := sim.Listen(*listen, src, log)
	if err != nil {
		return err
	}
	if *withHub {
		hub, err := sim.StartHub(ctx, src, sim.HubConfig{}, log)
		if err != nil {
			srv.Close()
			return err
		}
		defer hub.Close()
		log.Info("change notification hub serving", "source", srv.URL, "hub", hub.URL(), "topic", hub.Topic())
	}
	log.Info("simulated Source serving", "source", srv.URL, "resources", cfg.Resources, "rate", cfg.Rate,
		"time_form", cfg.TimeForm, "well_known", srv.URL+sim.PathDescription)

	runErr := make(chan error, 1)
	go func() { runErr <- src.Run(ctx) }()
	<-ctx.Done()
	err = <-runErr
	if cerr := srv.Close(); err == nil {
		err = cerr
	}
	log.Info("simulated Source stopped", "source", srv.URL)
	return err
}
