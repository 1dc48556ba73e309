package main

import (
	"context"
	"fmt"
	"io"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/node"
)

// runRestore puts a backup in place for a configuration whose data
// directory is new; `viaduct serve` on the same configuration then
// resumes where the backed-up node was.
func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("restore", "--config FILE --from DIR", stderr)
	path := fs.String("config", "", "the configuration `file` of the node to restore: its data_dir must be new or empty")
	from := fs.String("from", "", "the backup's `directory`, as viaduct backup wrote it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (the backup's directory is --from DIR)", errUsage, fs.Arg(0))
	}
	if *path == "" || *from == "" {
		return fmt.Errorf("%w: --config and --from are required", errUsage)
	}
	cfg, log, err := configured(*path, stderr)
	if err != nil {
		return err
	}
	m, err := backup.Restore(ctx, node.RestoreTarget(cfg), *from, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup of node %s taken %s restored into %s\n", m.Node, m.Taken.Format("2006-01-02 15:04:05Z07:00"), cfg.DataDir)
	fmt.Fprintf(stdout, "  catalog resumes after EVENTS sequence %d; %d streams restored\n", m.CatalogApplied, len(m.Streams))
	fmt.Fprintf(stdout, "  the blobs are not in the backup: blobs.%s must hold them (was %s)\n", blobsWhere(cfg), m.Blobs)
	fmt.Fprintf(stdout, "start the node with: viaduct serve --config %s\n", *path)
	return nil
}

// blobsWhere names the configuration's blob store as the file sets it.
func blobsWhere(cfg node.Config) string {
	if cfg.Blobs.Kind == "s3" {
		return "s3 (" + cfg.Blobs.S3.Endpoint + "/" + cfg.Blobs.S3.Bucket + ")"
	}
	return "dir (" + cfg.Blobs.Dir + ")"
}
