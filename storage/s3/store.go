package s3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/viaduct-mirror/viaduct/storage"
)

// staleTemporary is the age after which New removes a temporary object: no
// write lasts that long, so its writer has died.
const staleTemporary = 24 * time.Hour

// Store is a blob store in an S3 bucket. It is safe for concurrent use, also
// by several processes sharing the bucket.
type Store struct {
	client *minio.Client
	cfg    Config
	log    *slog.Logger
	stall  time.Duration // 0: uploadStall
	puts   chan struct{} // a slot for each single PUT under way (Config.PutsAtOnce)
	// batches sends small blobs together while it is on (Config.BatchPuts).
	batches *batcher
	m       *metrics
}

// uploadStall is how long a streamed upload may make no progress (the
// server reads none of a part, or does not answer once the last part is
// sent) before it is ended and the write fails. One part (PartSize, 16
// MiB by default) must get through in that time: 5 minutes is 56 KB/s.
const uploadStall = 5 * time.Minute

func (s *Store) stallAfter() time.Duration {
	if s.stall > 0 {
		return s.stall
	}
	return uploadStall
}

var (
	_ storage.Blobs   = (*Store)(nil)
	_ storage.Deleter = (*Store)(nil)
)

// New connects to the bucket, checking that the credentials are accepted and
// the bucket exists (creating it when cfg.CreateBucket says so), and removes
// stale temporaries.
func New(ctx context.Context, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	tr, err := cfg.transport()
	if err != nil {
		return nil, err
	}
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:     cfg.credentials(),
		Secure:    cfg.TLS,
		Region:    cfg.Region,
		Transport: tr,
		CustomMD5: newMD5,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 endpoint %s: %w", cfg.Endpoint, err)
	}
	s := &Store{client: client, cfg: cfg, log: cfg.Logger, puts: make(chan struct{}, cfg.PutsAtOnce)}
	s.batches = newBatcher(s)
	if err := s.ensureBucket(ctx); err != nil {
		return nil, err
	}
	if err := s.removeTemporaries(ctx, staleTemporary); err != nil {
		return nil, err
	}
	if cfg.BatchPuts == BatchAuto {
		if err := s.batches.probe(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.log.Info("the S3 server does not unpack batches: one PUT per small blob",
				"bucket", cfg.Bucket, "endpoint", cfg.Endpoint, "reason", err)
		} else {
			s.batches.on.Store(true)
			s.log.Info("the S3 server unpacks batches: small blobs committed together go in batches",
				"bucket", cfg.Bucket, "endpoint", cfg.Endpoint, "batch_blobs", cfg.BatchBlobs, "batches_at_once", cfg.BatchesAtOnce)
		}
	}
	if s.m, err = newMetrics(cfg.Registerer, s.batches.on.Load); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) ensureBucket(ctx context.Context) error {
	where := fmt.Sprintf("s3 bucket %s at %s", s.cfg.Bucket, s.cfg.Endpoint)
	ok, err := s.client.BucketExists(ctx, s.cfg.Bucket)
	if err != nil {
		return fmt.Errorf("%s: checking the bucket: %w", where, explain(err))
	}
	if ok {
		return nil
	}
	if !s.cfg.CreateBucket {
		return fmt.Errorf("%s: the bucket does not exist (create it, or set create_bucket)", where)
	}
	err = s.client.MakeBucket(ctx, s.cfg.Bucket, minio.MakeBucketOptions{Region: s.cfg.Region})
	if err != nil && minio.ToErrorResponse(err).Code != minio.BucketAlreadyOwnedByYou {
		return fmt.Errorf("%s: creating the bucket: %w", where, explain(err))
	}
	return nil
}

// explain adds what an operator should check to the errors that mean the
// credentials are wrong.
func explain(err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.InvalidAccessKeyID, minio.SignatureDoesNotMatch, minio.AccessDenied:
		return fmt.Errorf("access refused, check access_key and secret_key: %w", err)
	}
	return err
}

// removeTemporaries deletes temporary objects older than age.
func (s *Store) removeTemporaries(ctx context.Context, age time.Duration) error {
	cutoff := time.Now().Add(-age)
	objs := s.client.ListObjects(ctx, s.cfg.Bucket, minio.ListObjectsOptions{Prefix: s.tmpPrefix(), Recursive: true})
	for obj := range objs {
		if obj.Err != nil {
			return fmt.Errorf("s3 bucket %s: listing temporaries: %w", s.cfg.Bucket, explain(obj.Err))
		}
		if obj.LastModified.After(cutoff) {
			continue
		}
		if err := s.client.RemoveObject(ctx, s.cfg.Bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("s3 bucket %s: removing temporary %s: %w", s.cfg.Bucket, obj.Key, err)
		}
	}
	return nil
}

func (s *Store) blobName(key string) string { return s.cfg.Prefix + "blobs/" + key }
func (s *Store) tmpPrefix() string          { return s.cfg.Prefix + "tmp/" }

// Open returns the blob as a *minio.Object, which reads lazily and seeks
// with ranged GETs.
func (s *Store) Open(ctx context.Context, key string) (storage.Blob, error) {
	if err := storage.CheckKey(key); err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.cfg.Bucket, s.blobName(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, s.blobErr(key, err)
	}
	oi, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, s.blobErr(key, err)
	}
	return &blob{Object: obj, info: info(key, oi)}, nil
}

// Stat asks the server for the blob's size and time.
func (s *Store) Stat(ctx context.Context, key string) (storage.Info, error) {
	if err := storage.CheckKey(key); err != nil {
		return storage.Info{}, err
	}
	oi, err := s.client.StatObject(ctx, s.cfg.Bucket, s.blobName(key), minio.StatObjectOptions{})
	if err != nil {
		return storage.Info{}, s.blobErr(key, err)
	}
	return info(key, oi), nil
}

// Delete removes the blob's object. S3 does not report deleting a missing
// object, so neither does Delete.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := storage.CheckKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.cfg.Bucket, s.blobName(key), minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("deleting blob %s from s3 bucket %s: %w", key, s.cfg.Bucket, explain(err))
	}
	return nil
}

// blobErr wraps an error about a blob, as storage.ErrNotFound when the
// object does not exist.
func (s *Store) blobErr(key string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return fmt.Errorf("blob %s in s3 bucket %s: %w", key, s.cfg.Bucket, storage.ErrNotFound)
	}
	return fmt.Errorf("blob %s in s3 bucket %s: %w", key, s.cfg.Bucket, explain(err))
}

func info(key string, oi minio.ObjectInfo) storage.Info {
	return storage.Info{Key: key, Size: oi.Size, ModTime: oi.LastModified}
}

// blob is an open blob object.
type blob struct {
	*minio.Object
	info storage.Info
}

func (b *blob) Info() storage.Info { return b.info }

// touched touches the blob's object if it is there (see
// storage.Sweeper) and reports whether it was: a commit of bytes already
// stored then stores nothing.
func (s *Store) touched(ctx context.Context, key string) (bool, error) {
	_, err := s.Touch(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
