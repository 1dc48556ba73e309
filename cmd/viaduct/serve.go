package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/viaduct-mirror/viaduct/internal/telemetry"
	"github.com/viaduct-mirror/viaduct/node"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "--config FILE [--check]", stderr)
	path := fs.String("config", "", "the YAML configuration `file` (see configs/viaduct.yaml)")
	check := fs.Bool("check", false, "run every check start-up runs on the configuration, report every error, then exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (serve takes only flags; the configuration is --config FILE)", errUsage, fs.Arg(0))
	}
	if *path == "" {
		return fmt.Errorf("%w: --config is required", errUsage)
	}
	cfg, err := node.Load(*path)
	if err != nil {
		return err
	}
	if *check {
		if err := node.CheckStart(ctx, cfg); err != nil {
			return fmt.Errorf("config %s: %w", *path, err)
		}
		fmt.Fprintf(stdout, "%s: ok (%d sources)\n", *path, len(cfg.Sources))
		return nil
	}
	log, err := newLogger(stderr, cfg.Log)
	if err != nil {
		return err
	}
	shutdown, err := telemetry.SetupTracing(ctx, cfg.Tracing, version)
	if err != nil {
		return err
	}
	defer shutdown(context.Background())

	// SIGTERM and interrupts drain then stop the node; SIGHUP reloads
	// the configuration file.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := node.Start(ctx, cfg, node.Options{Logger: log, Version: version})
	if err != nil {
		return err
	}
	reload := func(ctx context.Context) (any, error) {
		next, err := node.Load(*path)
		if err != nil {
			log.Error("configuration not reloaded", "config", *path, "err", err)
			return nil, err
		}
		return n.ReloadConfig(ctx, next)
	}
	n.SetReloader(reload)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-hup:
			log.Info("SIGHUP: reloading the configuration", "config", *path)
			reload(ctx)
		case <-ctx.Done():
			log.Info("signal received: draining, then stopping")
			n.Drain()
			return n.Close()
		}
	}
}
