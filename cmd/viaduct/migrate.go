package main

import (
	"context"
	"fmt"
	"io"

	"github.com/viaduct-mirror/viaduct/queue"
)

// runMigrate applies this configuration's stream, consumer and bucket
// settings to the NATS the configuration names, over those found: what a
// node refuses to do at start on a cluster, so that the last node to
// start does not silently win. Run it once, from one node's configuration,
// after changing queue settings.
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", "--config FILE", stderr)
	path := fs.String("config", "", "the YAML configuration `file` whose queue settings to apply")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, log, err := configured(*path, stderr)
	if err != nil {
		return err
	}
	qcfg := cfg.Queue
	qcfg.Migrate = true
	q, err := queue.Open(ctx, qcfg, log)
	if err != nil {
		return err
	}
	defer q.Close()
	notify := cfg.Republish.Notify
	if notify.Enabled && notify.ExternalHub == "" {
		if _, err := q.HubOutStream(ctx, queue.HubOutConfig{MaxPerSubscriber: notify.MaxQueued, MaxBytes: notify.QueueMaxBytes}); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s: streams, consumer and buckets now have this configuration's settings\n", *path)
	return nil
}
