package s3

import (
	"context"
	"fmt"
	"io"

	"github.com/minio/minio-go/v7"

	"github.com/viaduct-mirror/viaduct/storage"
)

var _ storage.Objects = (*Store)(nil)

// objectName is a named object's key in the bucket: beside blobs/ and
// tmp/ under the store's Prefix, so that no blob listing or sweep sees it.
func (s *Store) objectName(name string) string { return s.cfg.Prefix + name }

// PutObject uploads the object in one request (or a multipart upload
// for a large one); S3 makes it visible whole or not at all.
func (s *Store) PutObject(ctx context.Context, name string, r io.Reader, size int64) error {
	if err := storage.CheckObjectName(name); err != nil {
		return err
	}
	if _, err := s.client.PutObject(ctx, s.cfg.Bucket, s.objectName(name), r, size,
		minio.PutObjectOptions{ContentType: "application/octet-stream"}); err != nil {
		return fmt.Errorf("writing object %s in s3 bucket %s: %w", name, s.cfg.Bucket, explain(err))
	}
	return nil
}

// GetObject opens the object, after a stat so that a missing one is
// ErrNotFound at once.
func (s *Store) GetObject(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := storage.CheckObjectName(name); err != nil {
		return nil, fmt.Errorf("%w: %w", err, storage.ErrNotFound)
	}
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.objectName(name), minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("object %s in s3 bucket %s: %w", name, s.cfg.Bucket, storage.ErrNotFound)
		}
		return nil, fmt.Errorf("object %s in s3 bucket %s: %w", name, s.cfg.Bucket, explain(err))
	}
	return obj, nil
}

// ListObjects lists the keys under prefix.
func (s *Store) ListObjects(ctx context.Context, prefix string, fn func(storage.ObjectInfo) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the listing's goroutine when fn stops early
	for oi := range s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.objectName(prefix), Recursive: true}) {
		if oi.Err != nil {
			return fmt.Errorf("listing objects %s in s3 bucket %s: %w", prefix, s.cfg.Bucket, explain(oi.Err))
		}
		name := oi.Key[len(s.cfg.Prefix):]
		if err := fn(storage.ObjectInfo{Name: name, Size: oi.Size, ModTime: oi.LastModified}); err != nil {
			return err
		}
	}
	return nil
}

// DeleteObject removes the object.
func (s *Store) DeleteObject(ctx context.Context, name string) error {
	if err := storage.CheckObjectName(name); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.objectName(name), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("deleting object %s in s3 bucket %s: %w", name, s.cfg.Bucket, explain(err))
	}
	return nil
}
