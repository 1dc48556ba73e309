package gc

import (
	"fmt"
	"time"
)

// Config is when and what garbage collection reclaims. Every field has a
// default (see Defaults).
type Config struct {
	// Every is how often a collection runs (the first one Every after
	// start). 0 turns garbage collection off. Default 1h.
	Every time.Duration `yaml:"every"`
	// Grace is how long a blob must have been unreferenced, and neither
	// committed nor touched, before it is deleted: the same blob must be
	// found unreferenced by two collections at least Grace apart. It
	// must outlast the longest time between a fetch worker finding a
	// blob stored and its event being applied to the catalog. Default 24h.
	Grace time.Duration `yaml:"grace"`
	// Retention is how long change-log entries and deleted resources
	// (tombstones) are kept: Change Lists reach back this far, rounded
	// down to a Change List period, and a Destination that last synced
	// longer ago must start again from a Resource List or Dump. 0 keeps
	// them forever. Default 2160h (90 days), enough for Destinations
	// that sync monthly.
	Retention time.Duration `yaml:"retention"`
}

// Defaults returns the configuration of a one-machine aggregator.
func Defaults() Config {
	return Config{Every: time.Hour, Grace: 24 * time.Hour, Retention: 90 * 24 * time.Hour}
}

// Validate names the first field that is out of range. With Every 0
// (collection off) the other fields are not read.
func (c Config) Validate() error {
	switch {
	case c.Every < 0:
		return fmt.Errorf("gc.every: %s is negative", c.Every)
	case c.Every == 0:
		return nil
	case c.Grace < time.Minute:
		return fmt.Errorf("gc.grace: %s is under a minute; a blob a fetch worker is re-adding could be deleted", c.Grace)
	case c.Retention < 0:
		return fmt.Errorf("gc.retention: %s is negative", c.Retention)
	case c.Retention > 0 && c.Retention < time.Hour:
		return fmt.Errorf("gc.retention: %s is under an hour: Destinations could not follow the Change Lists", c.Retention)
	}
	return nil
}
