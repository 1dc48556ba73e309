package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/viaduct-mirror/viaduct/node"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "--config FILE", stderr)
	path := fs.String("config", "", "the YAML configuration `file` (see configs/viaduct.yaml)")
	check := fs.Bool("check", false, "load and validate the configuration, then exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" {
		return fmt.Errorf("%w: --config is required", errUsage)
	}
	cfg, err := node.Load(*path)
	if err != nil {
		return err
	}
	if *check {
		fmt.Fprintf(stdout, "%s: ok (%d sources)\n", *path, len(cfg.Sources))
		return nil
	}
	log, err := newLogger(stderr, cfg.Log)
	if err != nil {
		return err
	}
	shutdown, err := node.SetupTracing(ctx, cfg.Tracing, version)
	if err != nil {
		return err
	}
	defer shutdown(context.Background())
	return node.Run(ctx, cfg, node.Options{Logger: log, Version: version})
}

// newLogger builds the process's slog logger from the log section.
func newLogger(w io.Writer, c node.LogConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(c.Level))); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}
