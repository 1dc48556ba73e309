package s3

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/viaduct-mirror/viaduct/storage"
)

// quarantinePrefix, after the store's Prefix, holds the objects the
// fixity audit found not to hash to their key, for an operator to look
// at. It is outside blobs/, so nothing lists, serves or collects them.
const quarantinePrefix = "quarantine/"

// Quarantine moves the blob's object out from under its key, to
// <prefix>quarantine/<key>.<unix nanoseconds>: a server-side copy, then
// a delete of the original. A blob that is not stored is not an error.
// The returned name is where the bytes went, empty when there were none.
func (s *Store) Quarantine(ctx context.Context, key string) (string, error) {
	if err := storage.CheckKey(key); err != nil {
		return "", err
	}
	oi, err := s.client.StatObject(ctx, s.cfg.Bucket, s.blobName(key), minio.StatObjectOptions{})
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("quarantining %w", s.blobErr(key, err))
	}
	name := s.cfg.Prefix + quarantinePrefix + key + "." + strconv.FormatInt(time.Now().UnixNano(), 10)
	dst := minio.CopyDestOptions{Bucket: s.cfg.Bucket, Object: name}
	src := minio.CopySrcOptions{Bucket: s.cfg.Bucket, Object: s.blobName(key)}
	if oi.Size <= maxCopySize {
		_, err = s.client.CopyObject(ctx, dst, src)
	} else {
		_, err = s.client.ComposeObject(ctx, dst, src)
	}
	if err != nil {
		return "", fmt.Errorf("quarantining blob %s in s3 bucket %s: copying it to %s: %w", key, s.cfg.Bucket, name, explain(err))
	}
	if err := s.Delete(ctx, key); err != nil {
		return name, fmt.Errorf("quarantining: %w", err)
	}
	return name, nil
}
