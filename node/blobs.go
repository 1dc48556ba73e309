package node

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/storage/s3"
)

func openBlobs(ctx context.Context, cfg BlobsConfig, log *slog.Logger, reg prometheus.Registerer) (storage.Blobs, error) {
	switch cfg.Kind {
	case "s3":
		c := cfg.S3
		c.Logger = log.With("role", "blobs")
		c.Registerer = reg
		st, err := s3.New(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("opening S3 blob store %s/%s: %w", c.Endpoint, c.Bucket, err)
		}
		return st, nil
	default:
		pack := cfg.PackBelow
		if cfg.Shared {
			pack = 0
		}
		st, err := dir.New(cfg.Dir, dir.SyncInterval(cfg.SyncInterval), dir.PackBelow(pack), dir.DirectWrites(cfg.DirectWrites))
		if err != nil {
			return nil, fmt.Errorf("opening blob directory %s: %w", cfg.Dir, err)
		}
		return st, nil
	}
}
