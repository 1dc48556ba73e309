package fetch

import (
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
)

// Config is how the fetch workers of one node behave. Every field has a
// default (see Defaults); the retry settings decide how long a Source that
// is in the middle of an update is given before a change is dead-lettered.
type Config struct {
	// Workers is how many changes this node handles at once. Each worker
	// holds at most one bitstream transfer; per-host limits of the upstream
	// client still apply across them. Most of a change's time is spent
	// waiting (the Source, the blob store's sync rounds, JetStream), not
	// computing, and the directory store syncs the blobs of all the
	// copies waiting together in one round, so a two-core node ingests
	// fastest with many more workers than cores (docs/fetching.md). A
	// worker gives the Source's host slot back once the body is read and
	// hands the verified copy on to be committed and announced, so up to
	// twice Workers more changes are on their way to the disk and EVENTS
	// while the workers read the next ones. Default 128.
	Workers int `yaml:"workers"`
	// MaxBlobBytes caps one bitstream. A larger body, or a declared length
	// above it, is dead-lettered without being stored. Default 5 GiB.
	MaxBlobBytes int64 `yaml:"max_blob_bytes"`
	// RetryBase is the delay before the second delivery of a change that
	// failed in a way worth retrying (a 5xx, a timeout, a truncated body,
	// a hash or length mismatch); each further delivery quadruples it.
	// Default 5s: most such failures pass within seconds, and a minute
	// before the first retry held a Source that had gone quiet back by
	// that minute; with the queue's 5 deliveries the retries still span
	// about 7 minutes (5s, 20s, 80s, 320s) of a Source's outage.
	RetryBase time.Duration `yaml:"retry_base"`
	// RetryMax caps the delay between deliveries. Default 30m.
	RetryMax time.Duration `yaml:"retry_max"`
	// NotFoundAttempts is how many deliveries a 404 or 410 gets before the
	// change is dead-lettered: a Source may list a resource a moment before
	// it serves it. Default 3 (the queue's max_deliver ends it sooner).
	NotFoundAttempts int `yaml:"not_found_attempts"`
	// InProgressEvery is how long a worker holds a change before telling
	// the queue it is still working on it, and how often after that. It
	// must be well under the queue's ack_wait (and its first backoff
	// entry), or a long transfer is handed to a second worker. Default 20s.
	InProgressEvery time.Duration `yaml:"in_progress_every"`
	// DrainTimeout is how long changes already being handled may run on
	// when the workers are stopped; past it they are interrupted and handed
	// back to the queue. Default 30s.
	DrainTimeout time.Duration `yaml:"drain_timeout"`

	// MaxParked is how many messages of CHANGES (a change, or a group of
	// up to queue.GroupMax of a baseline's) a node keeps aside, without a
	// worker, because their host had every slot taken
	// (upstream.per_host_concurrency) when they came: the workers turn to
	// other Sources' changes meanwhile and take a parked one as soon as its
	// host has a free slot. One host may hold a quarter of it. It is
	// larger than what the harvester queues at its defaults (twice
	// harvest.max_backlog, 1,250 messages), so that every Source queued
	// finds a place and none waits behind the Sources queued before it
	// (with 512, the last of 50 Sources began 24 s late). It must stay
	// under the CHANGES consumer's pending window (queue.max_ack_pending)
	// with the rest of what a node holds delivered (Unacked), or parked
	// changes would keep other Sources' changes from being delivered:
	// node.Config checks that. Default 2048.
	MaxParked int `yaml:"max_parked"`
	// HostWait is how long a worker waits for a slot of a saturated host
	// when its change cannot be parked (the lot, or the host's share of
	// it, is full). Past it the change is handed back to the queue for
	// BusyRetry, once (its first delivery); a later delivery waits as long
	// as it takes, so that congestion never costs a change more than one
	// of the queue's max_deliver deliveries. Default 2s.
	HostWait time.Duration `yaml:"host_wait"`
	// BusyRetry is how long a change handed back for its host's congestion
	// waits before it is delivered again. Default 2s: the host is busy
	// with the Source's other changes, and a change waiting longer than
	// they take leaves the host idle after a Source goes quiet.
	BusyRetry time.Duration `yaml:"busy_retry"`
}

// Defaults returns the configuration of a one-machine aggregator.
func Defaults() Config {
	return Config{
		Workers:          128,
		MaxBlobBytes:     5 << 30,
		RetryBase:        5 * time.Second,
		RetryMax:         30 * time.Minute,
		NotFoundAttempts: 3,
		InProgressEvery:  20 * time.Second,
		DrainTimeout:     30 * time.Second,
		MaxParked:        2048,
		HostWait:         2 * time.Second,
		BusyRetry:        2 * time.Second,
	}
}

// Validate checks the configuration before any worker starts, naming the
// offending field as it is written in the configuration file.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("fetch.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.Workers < 1 || c.Workers > 1024 {
		bad("workers", "must be between 1 and 1024, got %d", c.Workers)
	}
	if c.MaxBlobBytes <= 0 {
		bad("max_blob_bytes", "must be a positive number of bytes, got %d", c.MaxBlobBytes)
	}
	if c.RetryBase <= 0 {
		bad("retry_base", "must be positive, got %s", c.RetryBase)
	}
	if c.RetryMax < c.RetryBase {
		bad("retry_max", "must be at least retry_base (%s), got %s", c.RetryBase, c.RetryMax)
	}
	if c.NotFoundAttempts < 1 {
		bad("not_found_attempts", "must be at least 1, got %d", c.NotFoundAttempts)
	}
	if c.InProgressEvery <= 0 {
		bad("in_progress_every", "must be positive, got %s", c.InProgressEvery)
	}
	if c.DrainTimeout < 0 {
		bad("drain_timeout", "must not be negative, got %s", c.DrainTimeout)
	}
	if c.MaxParked < 0 {
		bad("max_parked", "must not be negative, got %d", c.MaxParked)
	}
	if c.HostWait < 0 {
		bad("host_wait", "must not be negative, got %s", c.HostWait)
	}
	if c.BusyRetry <= 0 {
		bad("busy_retry", "must be positive, got %s", c.BusyRetry)
	}
	return errors.Join(errs...)
}

// Unacked is how many messages of CHANGES one node may hold delivered
// and not yet acknowledged: the lot (MaxParked), a change in each
// worker's hands, twice as many whose copies are being committed (the
// pool's completion slots) and a pull taken ahead (queue.PullBatch). The
// CHANGES consumer's pending window (queue.max_ack_pending) must hold it,
// or the server stops delivering while the lot is full.
func (c *Config) Unacked() int {
	return c.MaxParked + (1+completionsPerWorker)*c.Workers + queue.PullBatch
}

// completionsPerWorker is how many changes a worker may have handed on,
// read and verified, while their copies are committed and their events
// acknowledged (Pool.slots).
const completionsPerWorker = 2

// retryDelay is the Nak delay after delivery number delivered failed:
// RetryBase doubled per earlier delivery, capped at RetryMax.
func (c *Config) retryDelay(delivered uint64) time.Duration {
	d := c.RetryBase
	for i := uint64(1); i < delivered && d < c.RetryMax; i++ {
		d *= 4
	}
	return min(d, c.RetryMax)
}
