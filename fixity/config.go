package fixity

import (
	"fmt"
	"time"
)

// Config is how fast and how often the audit reads the blob store. Every
// field has a default (see Defaults).
type Config struct {
	// BytesPerSecond is the most bytes of blobs the audit reads a second,
	// on average. Low, so that the audit never competes with ingest and
	// serving: a full pass over a store takes its size divided by this
	// (docs/fixity.md). 0 turns the audit off. Default 4194304 (4 MiB/s).
	BytesPerSecond int64 `yaml:"bytes_per_second"`
	// BlobsPerSecond is the most blobs the audit opens a second, on
	// average: small blobs cost the store and the CPU per blob more than
	// per byte (about 100 CPU-µs for a 1 KiB blob, docs/fixity.md), so a
	// budget of bytes alone would let a store of small blobs take a
	// whole core. Default 500.
	BlobsPerSecond int64 `yaml:"blobs_per_second"`
	// Every is the least time from the start of one pass to the start of
	// the next: a pass that ends sooner waits out the rest, one that takes
	// longer is followed at once. Default 24h.
	Every time.Duration `yaml:"every"`
}

// Defaults returns the audit of a one-machine aggregator: 4 MiB/s and 500
// blobs/s, a pass a day at most.
func Defaults() Config {
	return Config{BytesPerSecond: 4 << 20, BlobsPerSecond: 500, Every: 24 * time.Hour}
}

// Validate names the first field that is out of range. With
// BytesPerSecond 0 (audit off) the other fields are not read.
func (c Config) Validate() error {
	switch {
	case c.BytesPerSecond < 0:
		return fmt.Errorf("fixity.bytes_per_second: %d is negative (0 turns the audit off)", c.BytesPerSecond)
	case c.BytesPerSecond == 0:
		return nil
	case c.BytesPerSecond < 4096:
		return fmt.Errorf("fixity.bytes_per_second: %d is under 4096; a pass would never end", c.BytesPerSecond)
	case c.BlobsPerSecond < 1:
		return fmt.Errorf("fixity.blobs_per_second: %d is under 1; a pass would never end", c.BlobsPerSecond)
	case c.Every < 0:
		return fmt.Errorf("fixity.every: %s is negative", c.Every)
	}
	return nil
}
