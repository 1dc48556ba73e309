package node

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/fetch"
	"github.com/viaduct-mirror/viaduct/fixity"
	"github.com/viaduct-mirror/viaduct/gc"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/telemetry"
	"github.com/viaduct-mirror/viaduct/public"
	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/storage/dir"
	"github.com/viaduct-mirror/viaduct/storage/s3"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// Config is the whole of viaduct serve's configuration file. Every field
// has a default (see Defaults); configs/viaduct.yaml lists them all.
type Config struct {
	// DataDir holds everything the node keeps on disk: the JetStream store,
	// the catalog and, with the directory store, the blobs. Default ./data.
	DataDir string `yaml:"data_dir"`
	// Listen is the HTTP address of the public listener, which serves the
	// republished Source only: documents, bitstreams, the hub and
	// provenance. Default 127.0.0.1:8080.
	Listen string `yaml:"listen"`
	// PublicURL is the URL Destinations reach this node at; every URI in
	// every republished document starts with it. Default http:// and the
	// address the node listens on.
	PublicURL string `yaml:"public_url"`
	// Public bounds what clients may hold of the public listener: timeouts,
	// connections, concurrent list scans and dump downloads.
	Public public.Config `yaml:"public"`

	// Admin is the admin listener: the admin API, the status page,
	// /metrics, pprof and the health probes (see docs/operations.md).
	Admin admin.Config `yaml:"admin"`
	// Health bounds readiness and shutdown.
	Health HealthConfig `yaml:"health"`

	Log      LogConfig               `yaml:"log"`
	Tracing  telemetry.TracingConfig `yaml:"tracing"`
	Queue    queue.Config            `yaml:"queue"`
	Blobs    BlobsConfig             `yaml:"blobs"`
	Catalog  CatalogConfig           `yaml:"catalog"`
	Upstream upstream.Config         `yaml:"upstream"`
	Fetch    fetch.Config            `yaml:"fetch"`
	Harvest  harvester.Config        `yaml:"harvest"`
	// Sources are the upstream ResourceSync Sources this node harvests.
	Sources   []harvester.SourceConfig `yaml:"sources"`
	Republish republish.Config         `yaml:"republish"`
	GC        gc.Config                `yaml:"gc"`
	Fixity    fixity.Config            `yaml:"fixity"`
	// Snapshots are the catalog snapshots written to the blob store, from
	// which a new node starts (see docs/scale-out.md).
	Snapshots backup.Config `yaml:"snapshots"`
}

// DefaultEventsMaxAge is queue.events_max_age unless the file sets it,
// with snapshots on: a week, 168 snapshot intervals at the default
// hourly snapshots. With snapshots off (snapshots.interval 0) the
// default is 0, EVENTS kept for ever, as before snapshots existed.
const DefaultEventsMaxAge = 7 * 24 * time.Hour

// HealthConfig is what /readyz requires and how the node leaves service.
type HealthConfig struct {
	// MaxCatalogLag is how many events on EVENTS the catalog may be
	// behind and the node still be ready. Default 10000.
	MaxCatalogLag uint64 `yaml:"max_catalog_lag"`
	// ShutdownGrace is how long the node keeps serving, not ready, after
	// SIGTERM before it stops, so that load balancers see /readyz fail
	// and stop sending requests first. Default 0s.
	ShutdownGrace time.Duration `yaml:"shutdown_grace"`
}

// LogConfig selects the log/slog handler.
type LogConfig struct {
	// Level is debug, info, warn or error. Default info.
	Level string `yaml:"level"`
	// Format is text or json. Default text.
	Format string `yaml:"format"`
}

// BlobsConfig selects the blob store.
type BlobsConfig struct {
	// Kind is dir (a local directory, the default) or s3.
	Kind string `yaml:"kind"`
	// Dir is the directory store's root. Default <data_dir>/blobs.
	Dir string `yaml:"dir"`
	// SyncInterval is the directory store's least time between two sync
	// rounds (see storage/dir): commits arriving meanwhile share the next
	// round. Default 10ms; 0 runs rounds back to back.
	SyncInterval time.Duration `yaml:"sync_interval"`
	// PackBelow is the size in bytes up to which the directory store
	// appends a blob to a shared pack file instead of giving it a file
	// of its own (see storage/dir); 0 gives every blob its own file. At
	// most 16 MiB: a blob that may be packed is held in memory.
	// Ignored with Shared: the pack index is a SQLite database, which a
	// network file system does not share safely. Default 65536.
	PackBelow int64 `yaml:"pack_below"`
	// DirectWrites has the directory store write a blob expected to be a
	// MiB or more around the page cache (O_DIRECT) where the file system
	// takes such writes (see storage/dir). Default true.
	DirectWrites bool `yaml:"direct_writes"`
	// Shared declares that Dir is one directory every node sees (a
	// network file system): the only way a directory store may back
	// several nodes sharing an external queue (queue.url), since each
	// node serves bitstreams another node fetched. Default false.
	Shared bool      `yaml:"shared"`
	S3     s3.Config `yaml:"s3"`
}

// CatalogConfig places the SQLite catalog.
type CatalogConfig struct {
	// Path is the catalog file. Default <data_dir>/catalog.db.
	Path string `yaml:"path"`
	// CheckpointEvery is how often the catalog's WAL is copied back and
	// cut to nothing, when no reader is on an older snapshot; SQLite's own
	// checkpoints (every 10,000 pages) leave the file its largest size,
	// and journal_size_limit (128 MiB) bounds what they leave. Default 1m.
	CheckpointEvery time.Duration `yaml:"checkpoint_every"`
}

// Defaults returns the configuration of a one-machine node: embedded NATS,
// a directory blob store and SQLite, all under ./data.
func Defaults() Config {
	return Config{
		DataDir:   "data",
		Listen:    "127.0.0.1:8080",
		Admin:     admin.Defaults(),
		Health:    HealthConfig{MaxCatalogLag: 10000},
		Public:    public.Defaults(),
		Catalog:   CatalogConfig{CheckpointEvery: time.Minute},
		Log:       LogConfig{Level: "info", Format: "text"},
		Tracing:   telemetry.TracingConfig{SampleRatio: 1},
		Queue:     queueDefaults(),
		Blobs:     BlobsConfig{Kind: "dir", SyncInterval: dir.DefaultSyncInterval, PackBelow: dir.DefaultPackBelow, DirectWrites: true, S3: s3.Config{TLS: true}},
		Upstream:  upstream.DefaultConfig(),
		Fetch:     fetch.Defaults(),
		Harvest:   harvester.Defaults(),
		Republish: republish.Config{Notify: republish.NotifyDefaults()},
		GC:        gc.Defaults(),
		Fixity:    fixity.Defaults(),
		Snapshots: backup.Defaults(),
	}
}

// queueDefaults are the queue's, with the retention of EVENTS that the
// default snapshot schedule makes safe.
func queueDefaults() queue.Config {
	q := queue.Defaults()
	q.EventsMaxAge = DefaultEventsMaxAge
	return q
}

// Load reads a YAML configuration file over the defaults. Unknown fields are
// errors, so a misspelt option is never silently ignored. Every mistake
// in the file is reported at once, as *ConfigErrors, each on its line.
func Load(path string) (Config, error) {
	cfg := Defaults()
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return cfg, &ConfigErrors{File: path, Errs: []ConfigError{syntaxError(b, err)}}
	}
	errs, lines, paths := unknownFields(&root)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	// The decoder goes on past a value of the wrong kind, which keeps its
	// default, so the rest of the file is still checked.
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return cfg, &ConfigErrors{File: path, Errs: []ConfigError{{Msg: err.Error()}}}
		}
		for _, e := range te.Errors {
			if ce, ok := friendlyTypeError(e, lines); ok {
				errs = append(errs, ce)
			}
		}
	}
	if _, set := paths["queue.events_max_age"]; !set && cfg.Snapshots.Interval == 0 {
		// Snapshots off: a node can start only from the first event.
		cfg.Queue.EventsMaxAge = 0
	}
	cfg.Fill()
	errs = append(errs, located(cfg.Validate(), paths)...)
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b ConfigError) int { return cmp.Compare(lineOrLast(a.Line), lineOrLast(b.Line)) })
		return cfg, &ConfigErrors{File: path, Errs: errs}
	}
	return cfg, nil
}

// lineOrLast sorts the mistakes on no one line after the others.
func lineOrLast(line int) int {
	if line == 0 {
		return math.MaxInt
	}
	return line
}

// Fill derives the defaults that depend on other fields: paths under the
// data directory, the public URL, the collections of the Sources.
func (c *Config) Fill() {
	if c.Queue.URL == "" && c.Queue.Dir == "" {
		c.Queue.Dir = filepath.Join(c.DataDir, "jetstream")
	}
	if c.Blobs.Kind == "" {
		c.Blobs.Kind = "dir"
	}
	if c.Blobs.Kind == "dir" && c.Blobs.Dir == "" {
		c.Blobs.Dir = filepath.Join(c.DataDir, "blobs")
	}
	if c.Catalog.Path == "" {
		c.Catalog.Path = filepath.Join(c.DataDir, "catalog.db")
	}
	if c.Republish.Cache.Dir == "" {
		c.Republish.Cache.Dir = filepath.Join(c.DataDir, "cache", "documents")
	}
	if c.Republish.BaseURL == "" && c.PublicURL != "" {
		c.Republish.BaseURL = strings.TrimSuffix(c.PublicURL, "/")
	}
	for i := range c.Sources {
		if c.Sources[i].Collection == "" {
			c.Sources[i].Collection = c.Sources[i].Name
		}
	}
	if len(c.Republish.Collections) == 0 {
		seen := map[string]bool{}
		for _, s := range c.Sources {
			// A Source without a name has no collection: its missing
			// name is the mistake reported, not an empty collection's.
			for _, col := range s.Collections() {
				if col != "" && !seen[col] {
					seen[col] = true
					c.Republish.Collections = append(c.Republish.Collections, republish.Collection{Name: col})
				}
			}
		}
	}
}

// Validate checks the whole configuration and names the field at fault.
func (c *Config) Validate() error {
	var errs []error
	field := func(name string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data_dir: must be set"))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		field("listen", err)
	}
	if u, err := url.Parse(c.PublicURL); c.PublicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		errs = append(errs, fmt.Errorf("public_url: %q is not an http(s) URL", c.PublicURL))
	}
	errs = append(errs, c.Admin.Validate())
	if c.Admin.Listen == c.Listen && !strings.HasSuffix(c.Listen, ":0") {
		errs = append(errs, fmt.Errorf("admin.listen: %q is also listen; the admin listener needs its own address", c.Admin.Listen))
	}
	if c.Health.ShutdownGrace < 0 {
		errs = append(errs, fmt.Errorf("health.shutdown_grace: %v is negative", c.Health.ShutdownGrace))
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level: %q is not debug, info, warn or error", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log.format: %q is not text or json", c.Log.Format))
	}
	if c.Tracing.SampleRatio < 0 || c.Tracing.SampleRatio > 1 {
		errs = append(errs, fmt.Errorf("tracing.sample_ratio: %v is not between 0 and 1", c.Tracing.SampleRatio))
	}
	// The packages' own errors already name their section.
	errs = append(errs, c.Public.Validate())
	if c.Catalog.CheckpointEvery <= 0 {
		errs = append(errs, fmt.Errorf("catalog.checkpoint_every: must be positive, got %s", c.Catalog.CheckpointEvery))
	}
	errs = append(errs, c.Queue.Validate())
	switch c.Blobs.Kind {
	case "dir":
		if c.Blobs.SyncInterval < 0 || c.Blobs.SyncInterval > time.Second {
			errs = append(errs, fmt.Errorf("blobs.sync_interval: %v is not between 0 and 1s", c.Blobs.SyncInterval))
		}
		if c.Blobs.PackBelow < 0 || c.Blobs.PackBelow > 16<<20 {
			errs = append(errs, fmt.Errorf("blobs.pack_below: %d is not between 0 and 16 MiB", c.Blobs.PackBelow))
		}
	case "s3":
		// The store's own checks, which used to run only when it opened.
		// Credentials are left out: they often come from the service's
		// environment, which a check run elsewhere does not have.
		s3c := c.Blobs.S3
		if s3c.AccessKey == "" && s3c.SecretKey == "" {
			s3c.AccessKey, s3c.SecretKey = "checked-at-start", "checked-at-start"
		}
		if err := s3c.Check(); err != nil {
			errs = append(errs, fmt.Errorf("blobs.s3.%s", strings.TrimPrefix(err.Error(), "s3 ")))
		}
	default:
		errs = append(errs, fmt.Errorf("blobs.kind: %q is not dir or s3", c.Blobs.Kind))
	}
	errs = append(errs, c.checkShared())
	errs = append(errs, c.Upstream.Validate(), c.Fetch.Validate(), c.checkPending(), c.checkHeartbeat())
	field("harvest", c.Harvest.Validate())
	errs = append(errs, c.checkSources()...)
	field("republish.notify", c.Republish.Notify.Validate())
	errs = append(errs, c.GC.Validate(), c.Fixity.Validate(), c.Snapshots.Validate())
	if c.Snapshots.Validate() == nil {
		errs = append(errs, c.Snapshots.CheckRetention(c.Queue.EventsMaxAge))
	}
	rc := c.Republish
	if rc.BaseURL == "" {
		rc.BaseURL = "http://" + c.Listen // as Start fills it in
	}
	if err := rc.Check(); err != nil {
		errs = append(errs, errors.New(strings.Replace(err.Error(), "republish: ", "republish.", 1)))
	}
	return errors.Join(errs...)
}

// checkHeartbeat refuses fetch workers that tell the queue they are still
// at a change less often than twice within the shortest wait before the
// queue hands the change to another worker (queue.ack_wait, or the
// shortest queue.backoff entry, which replaces it): every change held
// longer (a slow transfer, a host's politeness, a wait for its slot)
// would be fetched a second time, and its event stored twice.
func (c *Config) checkHeartbeat() error {
	wait, name := c.Queue.AckWait, "queue.ack_wait"
	if len(c.Queue.Backoff) > 0 {
		wait, name = slices.Min(c.Queue.Backoff), "the shortest queue.backoff entry"
	}
	if wait <= 0 || c.Fetch.InProgressEvery <= 0 || 2*c.Fetch.InProgressEvery <= wait {
		return nil // the packages' own checks refuse what is not positive
	}
	return fmt.Errorf("fetch.in_progress_every: %s is more than half of %s (%s): a change a worker holds longer than that would be handed to a second worker; lower in_progress_every or raise the wait",
		c.Fetch.InProgressEvery, name, wait)
}

// checkPending refuses a lot of parked changes that could fill the
// CHANGES consumer's pending window: with every message this node may
// hold delivered and unacknowledged (fetch.Config.Unacked), the server
// would deliver no other Source's change until a parked host drained. A
// window under 1 is queue.Validate's error, not repeated here.
func (c *Config) checkPending() error {
	need := c.Fetch.Unacked()
	if c.Queue.MaxAckPending <= 0 || need <= c.Queue.MaxAckPending {
		return nil
	}
	return fmt.Errorf("fetch.max_parked: %d parked messages, with what %d fetch.workers hold and a pull ahead, need %d of the CHANGES consumer's pending window, more than queue.max_ack_pending (%d): lower max_parked or raise max_ack_pending",
		c.Fetch.MaxParked, c.Fetch.Workers, need, c.Queue.MaxAckPending)
}
