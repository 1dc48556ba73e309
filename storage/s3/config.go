package s3

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"
	"github.com/prometheus/client_golang/prometheus"
)

// Config says which bucket holds the blobs and how to reach it.
type Config struct {
	// Endpoint is the server's host and port, without a scheme:
	// "s3.eu-west-1.amazonaws.com", "minio.example.org:9000".
	Endpoint string `yaml:"endpoint"`
	// Bucket holds the blobs; other data may share it under other prefixes.
	Bucket string `yaml:"bucket"`
	// Region of the bucket. Empty lets the client ask the server.
	Region string `yaml:"region"`
	// AccessKey and SecretKey sign every request. When both are empty the
	// keys come from minio-go's credential chain (see credentials): the
	// environment, the AWS shared credentials file, then IAM (IRSA web
	// identity, ECS task role, EC2 instance profile), which keeps secrets
	// out of configuration files.
	AccessKey string `yaml:"access_key"`
	SecretKey string `yaml:"secret_key"`
	// SessionToken goes with temporary AccessKey and SecretKey (AWS STS).
	SessionToken string `yaml:"session_token"`
	// TLS selects https. Turn it off only for a server on a trusted network.
	TLS bool `yaml:"tls"`
	// CAFile is a PEM file of certificate authorities trusted besides the
	// system's, for a service whose certificate a private CA signed.
	CAFile string `yaml:"ca_file"`
	// Prefix is put before every object name, so several stores can share a
	// bucket. A "/" is added when it does not end with one.
	Prefix string `yaml:"prefix"`
	// CreateBucket creates the bucket at start-up when it does not exist;
	// otherwise a missing bucket is an error.
	CreateBucket bool `yaml:"create_bucket"`
	// PartSize is the size of each part of a streamed upload, and so the
	// memory each large write holds. At least 5 MiB; default 16 MiB.
	PartSize uint64 `yaml:"part_size"`
	// SinglePutSize is the largest blob held in memory and stored with one
	// PUT, which saves the copy and the delete a streamed blob needs.
	// Default 1 MiB; at most PartSize.
	SinglePutSize int `yaml:"single_put_size"`
	// MaxIdleConns is how many connections to the endpoint are kept open
	// between requests. A request that finds none idle opens a new TCP
	// (and TLS) connection, and one that finds the pool full closes its
	// own after the response: with fewer kept than requests in flight
	// (every fetch worker commits a blob), each request past the pool
	// pays a connect and a close on both sides. Default 256, twice the
	// fetch workers' default; keep it at least fetch.workers.
	MaxIdleConns int `yaml:"max_idle_conns"`
	// PutsAtOnce is how many single PUTs (blobs up to SinglePutSize) a
	// node sends at once; a commit past them waits for one to end. A
	// server that shares the machine, or serves many clients, takes
	// small PUTs faster from a few dozen at once than from one per
	// fetch worker: with MinIO on the same two cores, viaduct stored
	// 20,000 x 1 KiB at 0.89-0.93x the rate of a plain PUT loop from 32
	// workers, at 0.73-0.75x from 128 (docs/benchmarks.md). Streamed
	// uploads are not counted: each lasts as long as its Source takes to
	// send the blob. Default 32.
	PutsAtOnce int `yaml:"puts_at_once"`
	// BatchPuts is auto (the default) or off. With auto, small blobs
	// committed while others are under way are sent together, as one
	// tar that the server unpacks into an object each (MinIO's snowball
	// auto-extract), when a probe at start finds that the server does
	// so; a server that does not gets one PUT per blob. See the package
	// documentation for how each blob of a batch is verified.
	BatchPuts string `yaml:"batch_puts"`
	// BatchBlobs is the most blobs one batch holds. A batch is a copy of
	// its blobs' bytes, at most PartSize past its first blob. Default 64.
	BatchBlobs int `yaml:"batch_blobs"`
	// BatchesAtOnce is how many batches a node sends at once: MinIO
	// stores up to 16 objects of a batch at once. A lone commit goes out
	// in one of these slots too, and the blobs of a batch sent again one
	// by one within PutsAtOnce. Default 4.
	BatchesAtOnce int `yaml:"batches_at_once"`
	// Registerer receives the store's metrics; nil registers none.
	Registerer prometheus.Registerer `yaml:"-"`
	// Logger receives what the store cannot return, such as a temporary
	// object it failed to remove. Default: discarded.
	Logger *slog.Logger `yaml:"-"`
}

// Defaults and limits for Config.
const (
	DefaultPartSize      = 16 << 20
	MinPartSize          = 5 << 20
	DefaultSinglePutSize = 1 << 20
	DefaultMaxIdleConns  = 256
	DefaultPutsAtOnce    = 32
	DefaultBatchBlobs    = 64
	DefaultBatchesAtOnce = 4
)

// The values of Config.BatchPuts.
const (
	BatchAuto = "auto"
	BatchOff  = "off"
)

// withDefaults fills the fields left empty and checks the rest, naming the
// field at fault.
func (c Config) withDefaults() (Config, error) {
	if c.Endpoint == "" {
		return c, errors.New("s3 endpoint: not set")
	}
	if strings.Contains(c.Endpoint, "://") {
		return c, fmt.Errorf("s3 endpoint %q: give host:port without a scheme (https is chosen by tls)", c.Endpoint)
	}
	if err := s3utils.CheckValidBucketNameStrict(c.Bucket); err != nil {
		return c, fmt.Errorf("s3 bucket %q: %w", c.Bucket, err)
	}
	if err := c.checkKeys(); err != nil {
		return c, err
	}
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	if c.PartSize == 0 {
		c.PartSize = DefaultPartSize
	}
	if c.PartSize < MinPartSize {
		return c, fmt.Errorf("s3 part_size %d: below the S3 minimum of %d", c.PartSize, MinPartSize)
	}
	if c.SinglePutSize == 0 {
		c.SinglePutSize = DefaultSinglePutSize
	}
	if c.SinglePutSize < 0 || uint64(c.SinglePutSize) > c.PartSize {
		return c, fmt.Errorf("s3 single_put_size %d: must be positive and at most part_size (%d)", c.SinglePutSize, c.PartSize)
	}
	switch c.BatchPuts {
	case "":
		c.BatchPuts = BatchAuto
	case BatchAuto, BatchOff:
	default:
		return c, fmt.Errorf("s3 batch_puts %q: must be auto or off", c.BatchPuts)
	}
	for _, f := range []struct {
		v     *int
		def   int
		field string
	}{
		{&c.MaxIdleConns, DefaultMaxIdleConns, "max_idle_conns"},
		{&c.PutsAtOnce, DefaultPutsAtOnce, "puts_at_once"},
		{&c.BatchBlobs, DefaultBatchBlobs, "batch_blobs"},
		{&c.BatchesAtOnce, DefaultBatchesAtOnce, "batches_at_once"},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
		if *f.v < 0 {
			return c, fmt.Errorf("s3 %s %d: must be positive", f.field, *f.v)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}
