package node

import (
	"fmt"
	"os"
	"path/filepath"
)

// checkShared refuses a configuration in which nodes would share a queue
// but not their blobs: with an external queue any node's fetch worker may
// store a bitstream that every other node must serve, so the blob store
// must be S3 or a directory the operator declares shared.
func (c *Config) checkShared() error {
	if c.Queue.Embedded() || c.Blobs.Kind != "dir" || c.Blobs.Shared {
		return nil
	}
	return fmt.Errorf("blobs.kind: dir with queue.url set: nodes sharing a queue fetch bitstreams for each other, " +
		"so a node-local directory would leave most bitstreams missing on every other node; " +
		"use blobs.kind: s3, or set blobs.shared: true if blobs.dir is one directory every node mounts")
}

// makeDataDir creates the data directory and the catalog's directory:
// with an embedded queue the server creates the first for its store, but a
// node on an external queue must create them itself.
func makeDataDir(cfg *Config) error {
	for field, d := range map[string]string{"data_dir": cfg.DataDir, "catalog.path": filepath.Dir(cfg.Catalog.Path)} {
		if d == "" || d == "." {
			continue
		}
		if err := os.MkdirAll(d, 0o750); err != nil {
			return fmt.Errorf("%s: creating %s: %w", field, d, err)
		}
	}
	return nil
}
