package harvester

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// SourceConfig is one upstream Source in the operator's configuration file.
// Fields left out take the harvester Config's defaults.
type SourceConfig struct {
	// Name identifies the Source in cursors, metrics, logs and on the
	// CHANGES subjects. Required and unique; renaming a Source makes it a
	// new one, harvested again from its baseline.
	Name string `yaml:"name"`
	// URL is where to find the Source: its Source Description, its
	// Capability List, its home page, or any URL discovery accepts.
	URL string `yaml:"url"`
	// Collection is the aggregator's collection its resources go to.
	// Default: the Source's name.
	Collection string `yaml:"collection"`
	// Schedule is when to poll the Source for changes: a cron expression
	// (the seconds field optional) or a descriptor such as "@every 5m" or
	// "@hourly". Default: Config.Schedule.
	Schedule string `yaml:"schedule"`
	// BaselineSchedule is when to redo a full baseline from the Resource
	// List although the Source offers Change Lists, to catch what the
	// Change Lists missed. Left out: Config.BaselineSchedule; an empty
	// string: never. A Source without Change Lists gets a baseline on every
	// poll regardless.
	BaselineSchedule *string `yaml:"baseline_schedule"`
	// DeleteMissing makes a resource the aggregator holds and the Source's
	// Resource List no longer lists a deletion. Default: Config.DeleteMissing.
	DeleteMissing *bool `yaml:"delete_missing"`
	// Authorities are extra authorities ("https://mirror.example.org") the
	// Source's documents may point at, such as its mirrors. Only the URL's
	// own authority is allowed otherwise.
	Authorities []string `yaml:"authorities"`
	// AllowLoopback and AllowPrivate let this Source be, or point at,
	// a loopback or private address. Default: Config's, which are off.
	AllowLoopback *bool `yaml:"allow_loopback"`
	AllowPrivate  *bool `yaml:"allow_private"`
	// Notify subscribes to the Source's change notifications when its
	// Capability List offers a channel. Default: Config.Notify.
	Notify *bool `yaml:"notify"`
	// PreferDumps makes the first baseline come from the Resource Dump and
	// catch-up from the closed packages of the Change Dump, when the
	// Capability List offers them. Default: Config.PreferDumps.
	PreferDumps *bool `yaml:"prefer_dumps"`
	// SetCollections maps the URI of a Capability List of this Source to
	// the collection its resources go to. Every Capability List the
	// Source Description lists is harvested (Timbuctoo lists one per
	// dataset); those not named here go to Collection with the rest, so
	// the Source is one collection, as its Destinations see it, unless
	// the operator splits it. A collection named here is republished
	// like the Source's own. Default: none.
	SetCollections map[string]string `yaml:"set_collections"`
}

// Collections are every collection the Source's resources may go to:
// Collection (or the name), then those of SetCollections, each once.
func (s SourceConfig) Collections() []string {
	first := s.Collection
	if first == "" {
		first = s.Name
	}
	out := []string{first}
	keys := make([]string, 0, len(s.SetCollections))
	for k := range s.SetCollections {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if c := s.SetCollections[k]; c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Config is the harvester as a whole: the defaults every Source inherits
// and the bounds on the work it does.
type Config struct {
	// Schedule is the default polling schedule. Default "@every 5m".
	Schedule string `yaml:"schedule"`
	// BaselineSchedule is the default schedule of full baselines; empty
	// means never. Default "@weekly".
	BaselineSchedule string `yaml:"baseline_schedule"`
	// DeleteMissing is the default of SourceConfig.DeleteMissing. Default
	// true.
	DeleteMissing bool `yaml:"delete_missing"`
	// AllowLoopback and AllowPrivate are the defaults of the Source fields
	// of the same names. Default false.
	AllowLoopback bool `yaml:"allow_loopback"`
	AllowPrivate  bool `yaml:"allow_private"`
	// MaxEntries bounds the entries of one document. A Change List's
	// changes at or after the cursor are held in memory until all of them
	// have been read (a list out of order is sorted before any is queued),
	// so this also bounds that memory: roughly 300 bytes per change.
	// Default 1,000,000.
	MaxEntries int `yaml:"max_entries"`
	// MaxDocumentBytes bounds the size of one document, after gzip
	// decoding. Default 256 MiB.
	MaxDocumentBytes int64 `yaml:"max_document_bytes"`
	// Concurrency is how many Sources are polled at once. Default 4.
	Concurrency int `yaml:"concurrency"`
	// MaxBacklog is how far the harvester may run ahead of the fetch
	// workers: before queueing more changes of a Source it waits while
	// CHANGES holds more than its share of this many not yet finished,
	// counting each message of CHANGES as a full group of queue.GroupMax
	// changes (a baseline's are; single changes, such as pushes, are
	// counted high). A Source's share is MaxBacklog divided among the
	// Sources whose passes are due, so that the workers always have every
	// Source's changes to fetch, each host at its own politeness; while
	// a newly due Source queues its share, the whole may reach twice
	// MaxBacklog. A baseline of millions would otherwise be queued in
	// minutes, and JetStream keeps the id of every message queued within
	// its duplicate window in memory. Default 20,000, several seconds of
	// work for the workers of one node.
	MaxBacklog int `yaml:"max_backlog"`
	// StarvedAfter is how long a pass may wait on its Source (for an answer
	// or the next bytes of a document) holding one of the Concurrency
	// slots; past it the slot goes to another Source's pass until the
	// Source answers, so slow Sources never hold every slot. 0 keeps the
	// slot however long the wait. Default 2s.
	StarvedAfter time.Duration `yaml:"starved_after"`
	// ProgressTimeout is how long a pass may wait on its Source (for the
	// answer to a GET, or for the next entry of a document) without
	// reading a new entry or finishing a document; past it the pass ends,
	// failed, and the Source is polled again at its next schedule. Time
	// spent waiting for the queue or the fetch workers does not count.
	// With StarvedAfter it keeps a trickling Source from holding its pass
	// (and the Source's lease) for up to PassTimeout. 0 turns it off.
	// Default 5m.
	ProgressTimeout time.Duration `yaml:"progress_timeout"`
	// PassTimeout bounds one pass over one Source, baseline included.
	// Default 1h.
	PassTimeout time.Duration `yaml:"pass_timeout"`
	// PushConfig is how change notifications are received (notify,
	// push_schedule, quiet_window, subscriber).
	PushConfig `yaml:",inline"`
	// DeadLetterConfig is how dead letters come back after a Source
	// recovers (dead_letter_retries, dead_letter_batch).
	DeadLetterConfig `yaml:",inline"`
	// PreferDumps is the default of SourceConfig.PreferDumps: take a
	// Source's first baseline from its Resource Dump and its catch-up from
	// the closed packages of its Change Dump, a few large downloads instead
	// of one GET per bitstream. Default true. A Source offering only Dumps
	// is harvested from them whatever this says. See docs/dumps.md.
	PreferDumps bool `yaml:"prefer_dumps"`
	// MaxPackageBytes bounds one Dump package as downloaded; it is spooled
	// to disk, never held in memory. Default 4 GiB.
	MaxPackageBytes int64 `yaml:"max_package_bytes"`
	// ImmediateFirstPass starts the first pass over a Source never
	// harvested as soon as the harvester runs (or a reload adds it),
	// rather than at its first schedule tick. Default true.
	ImmediateFirstPass bool `yaml:"immediate_first_pass"`
	// MaxPages bounds the pages of one Resource List that links its next
	// page with rs:ln rel="next" (AtoM's ?page=N): past it the rest is
	// not read, which is logged and counted, and the baseline infers no
	// deletions. A page linking back to one already read ends the walk
	// the same way. Default 10,000.
	MaxPages int `yaml:"max_pages"`
}

// Defaults is the Config an operator gets without saying anything.
func Defaults() Config {
	return Config{
		Schedule:         "@every 5m",
		BaselineSchedule: "@weekly",
		DeleteMissing:    true,
		MaxEntries:       1_000_000,
		MaxDocumentBytes: 256 << 20,
		Concurrency:      4,
		MaxBacklog:       20_000,
		PassTimeout:      time.Hour,
		StarvedAfter:     2 * time.Second,
		ProgressTimeout:  5 * time.Minute,
		PushConfig:       pushDefaults(),
		DeadLetterConfig: deadLetterDefaults(),
		PreferDumps:      true,
		MaxPackageBytes:  4 << 30,

		ImmediateFirstPass: true,
		MaxPages:           10_000,
	}
}

// cronParser reads schedules: a standard five-field expression, an optional
// leading seconds field, or a descriptor.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Validate reports the first setting that cannot work, naming its field.
func (c *Config) Validate() error {
	if _, err := cronParser.Parse(c.Schedule); err != nil {
		return fmt.Errorf("schedule: %q: %w", c.Schedule, err)
	}
	if c.BaselineSchedule != "" {
		if _, err := cronParser.Parse(c.BaselineSchedule); err != nil {
			return fmt.Errorf("baseline_schedule: %q: %w", c.BaselineSchedule, err)
		}
	}
	if err := c.PushConfig.validate(); err != nil {
		return err
	}
	if err := c.DeadLetterConfig.validate(); err != nil {
		return err
	}
	switch {
	case c.MaxEntries <= 0:
		return errors.New("max_entries: must be positive")
	case c.MaxDocumentBytes <= 0:
		return errors.New("max_document_bytes: must be positive")
	case c.Concurrency <= 0:
		return errors.New("concurrency: must be positive")
	case c.MaxBacklog <= 0:
		return errors.New("max_backlog: must be positive")
	case c.PassTimeout <= 0:
		return errors.New("pass_timeout: must be positive")
	case c.StarvedAfter < 0:
		return errors.New("starved_after: must not be negative")
	case c.ProgressTimeout < 0:
		return errors.New("progress_timeout: must not be negative")
	case c.MaxPackageBytes <= 0:
		return errors.New("max_package_bytes: must be positive")
	case c.MaxPages <= 0:
		return errors.New("max_pages: must be positive")
	}
	return nil
}

// ValidateSources checks the Sources against c: every field parses, names
// are present and unique. Errors name the field as sources[i].field.
func (c *Config) ValidateSources(sources []SourceConfig) error {
	seen := make(map[string]int, len(sources))
	for i, s := range sources {
		at := func(field string) string { return fmt.Sprintf("sources[%d].%s", i, field) }
		if s.Name == "" {
			return fmt.Errorf("%s: required", at("name"))
		}
		if j, dup := seen[s.Name]; dup {
			return fmt.Errorf("%s: %q is already the name of sources[%d]", at("name"), s.Name, j)
		}
		seen[s.Name] = i
		if s.URL == "" {
			return fmt.Errorf("%s: required (source %q)", at("url"), s.Name)
		}
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: %q is not an absolute http or https URL (source %q)", at("url"), s.URL, s.Name)
		}
		if s.Schedule != "" {
			if _, err := cronParser.Parse(s.Schedule); err != nil {
				return fmt.Errorf("%s: %q: %w (source %q)", at("schedule"), s.Schedule, err, s.Name)
			}
		}
		if s.BaselineSchedule != nil && *s.BaselineSchedule != "" {
			if _, err := cronParser.Parse(*s.BaselineSchedule); err != nil {
				return fmt.Errorf("%s: %q: %w (source %q)", at("baseline_schedule"), *s.BaselineSchedule, err, s.Name)
			}
		}
		for uri, col := range s.SetCollections {
			if u, err := url.Parse(uri); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s: %q is not an absolute http or https URL (source %q)", at("set_collections"), uri, s.Name)
			}
			if col == "" {
				return fmt.Errorf("%s[%q]: empty collection (source %q)", at("set_collections"), uri, s.Name)
			}
		}
		for k, a := range s.Authorities {
			if _, err := upstream.ParseAuthority(a); err != nil {
				return fmt.Errorf("%s: %q: %w (source %q)", at(fmt.Sprintf("authorities[%d]", k)), a, err, s.Name)
			}
		}
	}
	return nil
}

// resolved is a Source with every default filled in and its schedules
// parsed.
type resolved struct {
	SourceConfig
	schedule      cron.Schedule
	baseline      cron.Schedule // nil: never
	deleteMissing bool
	loopback      bool
	private       bool
	preferDumps   bool
}

// resolve fills in s's defaults from c; s has been validated.
func (c *Config) resolve(s SourceConfig) (*resolved, error) {
	r := &resolved{SourceConfig: s, deleteMissing: c.DeleteMissing, loopback: c.AllowLoopback, private: c.AllowPrivate, preferDumps: c.PreferDumps}
	if r.Collection == "" {
		r.Collection = s.Name
	}
	if r.Schedule == "" {
		r.Schedule = c.Schedule
	}
	var err error
	if r.schedule, err = cronParser.Parse(r.Schedule); err != nil {
		return nil, fmt.Errorf("source %q: schedule %q: %w", s.Name, r.Schedule, err)
	}
	bs := c.BaselineSchedule
	if s.BaselineSchedule != nil {
		bs = *s.BaselineSchedule
	}
	if bs != "" {
		if r.baseline, err = cronParser.Parse(bs); err != nil {
			return nil, fmt.Errorf("source %q: baseline_schedule %q: %w", s.Name, bs, err)
		}
	}
	if s.DeleteMissing != nil {
		r.deleteMissing = *s.DeleteMissing
	}
	if s.AllowLoopback != nil {
		r.loopback = *s.AllowLoopback
	}
	if s.AllowPrivate != nil {
		r.private = *s.AllowPrivate
	}
	if s.PreferDumps != nil {
		r.preferDumps = *s.PreferDumps
	}
	return r, nil
}
