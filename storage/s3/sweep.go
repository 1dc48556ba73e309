package s3

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/viaduct-mirror/viaduct/storage"
)

var _ storage.Sweeper = (*Store)(nil)

// List lists the objects under the blobs prefix; names that are not keys
// are skipped.
func (s *Store) List(ctx context.Context, fn func(storage.Info) error) error {
	prefix := s.blobName("")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing goroutine when fn fails
	for obj := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("s3 bucket %s: listing blobs: %w", s.cfg.Bucket, explain(obj.Err))
		}
		key := strings.TrimPrefix(obj.Key, prefix)
		if storage.CheckKey(key) != nil {
			continue
		}
		if err := fn(info(key, obj)); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Touch copies the object onto itself with new metadata, which S3 allows
// only when something changes, and which gives it a new LastModified.
func (s *Store) Touch(ctx context.Context, key string) (storage.Info, error) {
	if err := storage.CheckKey(key); err != nil {
		return storage.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.cfg.Bucket, s.blobName(key), minio.StatObjectOptions{})
	if err != nil {
		return storage.Info{}, s.blobErr(key, err)
	}
	dst := minio.CopyDestOptions{Bucket: s.cfg.Bucket, Object: s.blobName(key), ReplaceMetadata: true,
		UserMetadata: map[string]string{"Viaduct-Touched": time.Now().UTC().Format(time.RFC3339Nano)}}
	src := minio.CopySrcOptions{Bucket: s.cfg.Bucket, Object: s.blobName(key)}
	if oi.Size <= maxCopySize {
		_, err = s.client.CopyObject(ctx, dst, src)
	} else {
		_, err = s.client.ComposeObject(ctx, dst, src)
	}
	if err != nil {
		return storage.Info{}, s.blobErr(key, err)
	}
	return s.Stat(ctx, key)
}

// DeleteIdle stats the object and deletes it when its LastModified is
// before since. S3 has no conditional delete that every server offers, so
// a touch landing between the two requests (a few milliseconds) is not
// seen; see docs/gc.md for what covers that window.
func (s *Store) DeleteIdle(ctx context.Context, key string, since time.Time) (bool, error) {
	if err := storage.CheckKey(key); err != nil {
		return false, err
	}
	oi, err := s.client.StatObject(ctx, s.cfg.Bucket, s.blobName(key), minio.StatObjectOptions{})
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return false, nil
	}
	if err != nil {
		return false, s.blobErr(key, err)
	}
	if !oi.LastModified.Before(since) {
		return false, nil
	}
	if err := s.Delete(ctx, key); err != nil {
		return false, err
	}
	return true, nil
}
