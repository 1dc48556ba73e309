package backup

import (
	"fmt"
	"time"
)

// Config is the snapshots section: how often a catalog snapshot is
// written to the blob store, and how many are kept.
type Config struct {
	// Interval is the time between two snapshots. One node at a time
	// writes them (the snapshot lease); each writes when the newest in
	// the store is Interval old. 0 turns snapshots off, and then EVENTS
	// must be kept for ever (queue.events_max_age 0). Default 1h.
	Interval time.Duration `yaml:"interval"`
	// Keep is how many snapshots are kept, the newest; older ones are
	// deleted once a new one is verified written. Default 3.
	Keep int `yaml:"keep"`
}

// Defaults are an hourly snapshot, three kept.
func Defaults() Config { return Config{Interval: time.Hour, Keep: 3} }

// RetentionMargin is how many snapshot intervals EVENTS must keep at
// least: a node joining from the newest snapshot needs every event
// after it, and the newest is up to one interval old when all goes
// well, more when a write fails and is tried again at the next
// interval.
const RetentionMargin = 24

// Validate names the field at fault.
func (c Config) Validate() error {
	switch {
	case c.Interval < 0:
		return fmt.Errorf("snapshots.interval: %s is negative", c.Interval)
	case c.Interval == 0:
		return nil
	case c.Interval < time.Second:
		return fmt.Errorf("snapshots.interval: %s is under a second", c.Interval)
	case c.Keep < 1:
		return fmt.Errorf("snapshots.keep: %d; at least 1 is kept", c.Keep)
	}
	return nil
}

// CheckRetention refuses an EVENTS retention (queue.events_max_age,
// maxAge) that a node joining from a snapshot could not rely on: with
// snapshots off, anything but 0 (for ever); with them on, anything but
// 0 shorter than RetentionMargin intervals.
func (c Config) CheckRetention(maxAge time.Duration) error {
	switch {
	case maxAge == 0:
		return nil
	case c.Interval == 0:
		return fmt.Errorf("queue.events_max_age: %s with snapshots off (snapshots.interval 0): a new node, or one that lost its disk, rebuilds its catalog from the first event; keep EVENTS for ever (events_max_age: 0) or turn snapshots on", maxAge)
	case maxAge < RetentionMargin*c.Interval:
		return fmt.Errorf("queue.events_max_age: %s is shorter than %d snapshot intervals (snapshots.interval %s, so at least %s): a node joining from the newest snapshot needs every event after it; lengthen events_max_age or shorten snapshots.interval",
			maxAge, RetentionMargin, c.Interval, RetentionMargin*c.Interval)
	}
	return nil
}
