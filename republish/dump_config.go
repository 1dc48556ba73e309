package republish

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// DumpConfig is how the republisher packages each collection as Resource
// Dumps and Change Dumps (spec sections 11 and 13). Packages are stored in
// the blob store, so a Dump costs about as much storage again as the
// bitstreams it holds: Dumps are off unless enabled.
type DumpConfig struct {
	// Enabled publishes a Resource Dump and a Change Dump per collection
	// and lists them in its Capability List. Default false.
	Enabled bool `yaml:"enabled"`
	// Schedule is when each collection's Resource Dump is rebuilt: a cron
	// expression (five fields, or six with seconds) or a descriptor such
	// as @daily or @every 6h, in UTC. Default @daily. A collection without
	// a Resource Dump gets one when the node starts.
	Schedule string `yaml:"schedule"`
	// MaxEntries is the most bitstreams (and deletions, in a Change Dump)
	// one package holds. Default and maximum 50,000, so that its manifest
	// is a valid Sitemap.
	MaxEntries int `yaml:"max_entries"`
	// MaxBytes is the most bitstream bytes one package holds; a bitstream
	// larger than that gets a package of its own. Default 1,000,000,000.
	MaxBytes int64 `yaml:"max_bytes"`
	// CheckEvery is how often the Change Dump looks for Change List
	// periods that have closed, to package them. Default 1m.
	CheckEvery time.Duration `yaml:"check_every"`
	// PastPeriods bounds how far back the first Change Dump of a
	// collection reaches: the most recent PastPeriods closed Change List
	// periods. Default 168 (a week of hourly periods).
	PastPeriods int `yaml:"past_periods"`
	// MaxChangeDumps is the most packages the Change Dump lists, the most
	// recent ones. Default 1,000; at most 50,000.
	MaxChangeDumps int `yaml:"max_changedumps"`
	// TempDir holds each manifest's entries while its package is written;
	// default the system's temporary directory.
	TempDir string `yaml:"temp_dir"`
}

// dumpCron reads DumpConfig.Schedule, as the harvester reads its
// schedules.
var dumpCron = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// withDefaults fills in defaults and checks every field, naming it.
func (c DumpConfig) withDefaults() (DumpConfig, error) {
	if c.Schedule == "" {
		c.Schedule = "@daily"
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = SitemapMaxEntries
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 1_000_000_000
	}
	if c.CheckEvery == 0 {
		c.CheckEvery = time.Minute
	}
	if c.PastPeriods == 0 {
		c.PastPeriods = 168
	}
	if c.MaxChangeDumps == 0 {
		c.MaxChangeDumps = 1000
	}
	if _, err := dumpCron.Parse(c.Schedule); err != nil {
		return c, fmt.Errorf("republish: dumps.schedule %q: %w", c.Schedule, err)
	}
	switch {
	case c.MaxEntries < 1 || c.MaxEntries > SitemapMaxEntries:
		return c, fmt.Errorf("republish: dumps.max_entries %d: between 1 and %d", c.MaxEntries, SitemapMaxEntries)
	case c.MaxBytes < 1:
		return c, fmt.Errorf("republish: dumps.max_bytes %d: at least 1", c.MaxBytes)
	case c.CheckEvery < 10*time.Millisecond:
		return c, fmt.Errorf("republish: dumps.check_every %s: at least 10ms", c.CheckEvery)
	case c.PastPeriods < 1:
		return c, fmt.Errorf("republish: dumps.past_periods %d: at least 1", c.PastPeriods)
	case c.MaxChangeDumps < 1 || c.MaxChangeDumps > SitemapMaxEntries:
		return c, fmt.Errorf("republish: dumps.max_changedumps %d: between 1 and %d", c.MaxChangeDumps, SitemapMaxEntries)
	}
	return c, nil
}
