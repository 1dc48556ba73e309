package queue

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/propagation"
)

// Config says where viaduct's NATS lives and how its streams keep messages.
// The zero value is not usable: start from Defaults and set Dir (embedded
// server) or URL (external cluster).
type Config struct {
	// URL is an external NATS server or cluster (nats://a:4222,nats://b:4222).
	// Empty runs an embedded nats-server inside the process.
	URL string `yaml:"url"`
	// Auth holds the credentials and TLS files for an external cluster.
	Auth AuthConfig `yaml:"auth"`
	// Listen is the embedded server's client address. Port -1 picks a free
	// port. It stays on loopback unless other nodes must reach this one.
	Listen string `yaml:"listen"`
	// Dir is the embedded server's JetStream file store. Required when URL
	// is empty; it survives restarts, so unacknowledged changes and the
	// event log do too.
	Dir string `yaml:"dir"`
	// MaxMemory and MaxStore cap the embedded server's JetStream memory
	// and disk, in bytes, so that no input can grow them without bound.
	MaxMemory int64 `yaml:"max_memory"`
	MaxStore  int64 `yaml:"max_store"`
	// Replicas is each stream's replication factor: 1 for the embedded
	// server, 3 (or 5) on an external cluster.
	Replicas int `yaml:"replicas"`
	// DuplicateWindow is how long CHANGES remembers a Nats-Msg-Id: the
	// same change (or group of changes) published twice within it is
	// stored once. It covers the repeats that come close together: a
	// change seen by a push and by the next poll, two nodes harvesting a
	// Source while its lease passes from one to the other, a publish
	// retried at once. A repeat after it is stored again and absorbed
	// where it lands: a fetch worker skips a change whose content the
	// catalog holds. Events carry no id; the catalog absorbs a repeated
	// one (docs/design.md). The window is only a saving of such repeats,
	// and memory is its price: JetStream keeps every id of it in memory,
	// about 120 bytes each, held for up to three windows. CHANGES has one
	// id a group of up to 32 changes: at 5,000 changes a second, about a
	// megabyte of ids. Default 20s.
	DuplicateWindow time.Duration `yaml:"duplicate_window"`

	// Consumer is the durable name of the CHANGES consumer that every
	// fetch worker on every node shares.
	Consumer string `yaml:"consumer"`
	// AckWait is how long a worker may hold a change without acking or
	// calling InProgress before it is redelivered. Ignored when Backoff is
	// set.
	AckWait time.Duration `yaml:"ack_wait"`
	// PublishTimeout bounds the wait for the server's acknowledgement of a
	// publish, asynchronous ones included: past it the publish has failed
	// (the change is handed back and retried with backoff), so that a full
	// store or a lost connection delays work and never freezes a worker.
	// Default 30s.
	PublishTimeout time.Duration `yaml:"publish_timeout"`
	// MaxAckPending is how many messages of CHANGES the consumer keeps
	// delivered and not yet acknowledged, on every node together: past
	// it the server delivers nothing more until some are. Each node needs
	// its fetch.max_parked, three times its fetch.workers and a pull's
	// worth (16) of it (node.Config checks one node's need), so that
	// changes set aside for a saturated host never stop the delivery of
	// other Sources' changes. Default 10,000: four nodes at the fetch
	// defaults.
	MaxAckPending int `yaml:"max_ack_pending"`
	// MaxDeliver is how many times a change is delivered. The worker that
	// gets the last delivery dead-letters it instead of failing it again.
	MaxDeliver int `yaml:"max_deliver"`
	// Backoff, when set, replaces AckWait: entry i is how long delivery i+1
	// may stay unacknowledged before the next one (the last entry repeats).
	// It must not be longer than MaxDeliver.
	Backoff []time.Duration `yaml:"backoff"`

	// EventsMaxAge is how long EVENTS keeps the aggregator's change log;
	// 0 keeps it forever. viaduct serve sets 168h unless the file says
	// otherwise, with catalog snapshots on: a node whose catalog falls
	// further behind starts from the newest snapshot (package backup).
	EventsMaxAge time.Duration `yaml:"events_max_age"`
	// EventsMaxBytes caps EVENTS; 0 means only MaxStore bounds it.
	EventsMaxBytes int64 `yaml:"events_max_bytes"`
	// EventsCompression is how EVENTS keeps its message blocks on disk:
	// "s2" (the default) compresses each block once it is full, "none"
	// keeps them as written. An event is JSON whose keys, URI prefixes,
	// times and media types repeat from one event to the next: a block of
	// a static Source's baseline took 3.6 times less room compressed, a
	// repository's about 3.1, for about 7 ms of CPU per 8 MB block (half
	// a microsecond an event). The block being written and the blocks
	// JetStream holds in memory are not compressed, so the applier reads
	// as before; the server reads a full block whole to compress it, a
	// passing buffer that raised a baseline's peak memory by 11-22 MB. A
	// node that replays EVENTS reads less. A change applies to the
	// blocks filled after the node's next start.
	EventsCompression string `yaml:"events_compression"`
	// DeadMaxAge and DeadMaxBytes bound DEADLETTER the same way; 0 keeps
	// dead letters until an operator removes them.
	DeadMaxAge   time.Duration `yaml:"dead_max_age"`
	DeadMaxBytes int64         `yaml:"dead_max_bytes"`

	// NodeName names this node in the leases it holds, so that an operator
	// reading the lease bucket sees who harvests what. Empty means the
	// host name and a random suffix, different at every start.
	NodeName string `yaml:"node_name"`
	// LeaseTTL is how long a node's lease on a Source (and any other
	// lease, such as the collector's) outlives its last renewal: a node
	// that dies without releasing loses its Sources after at most this
	// long. Leases are renewed every third of it.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// Migrate lets this node change the settings of existing streams,
	// consumers and buckets on an external cluster to its own. Without it
	// a difference is logged and the settings found are kept, so that the
	// last node to start does not silently win; `viaduct migrate` sets it.
	// The embedded server is always updated: no other node shares it.
	Migrate bool `yaml:"migrate"`

	// Debug sends the embedded server's notices and debug lines to the
	// logger; without it only its warnings and errors are logged.
	Debug bool `yaml:"debug"`

	// Registerer receives the queue's counters; nil registers none.
	Registerer prometheus.Registerer `yaml:"-"`
	// Propagator carries trace context in message headers; nil means W3C
	// trace context and baggage.
	Propagator propagation.TextMapPropagator `yaml:"-"`
}

// Defaults returns the configuration of a one-machine aggregator, with
// bounded memory and disk and retries spread over about an hour and a half.
// Dir is left empty: the caller names the data directory.
func Defaults() Config {
	return Config{
		Listen:            "127.0.0.1:-1",
		MaxMemory:         256 << 20,
		MaxStore:          10 << 30,
		Replicas:          1,
		DuplicateWindow:   20 * time.Second,
		Consumer:          "fetch",
		AckWait:           time.Minute,
		PublishTimeout:    30 * time.Second,
		MaxAckPending:     10_000,
		MaxDeliver:        5,
		EventsCompression: "s2",
		Backoff:           []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour},
		LeaseTTL:          30 * time.Second,
	}
}

// Embedded reports whether Open starts a server in the process.
func (c *Config) Embedded() bool { return c.URL == "" }

// Validate checks the configuration before anything is started, naming
// the offending field as it is written in the configuration file.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("queue.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.Embedded() {
		if c.Dir == "" {
			bad("dir", "required for the embedded server (url is empty)")
		}
		if _, _, err := splitListen(c.Listen); err != nil {
			bad("listen", "%v", err)
		}
		if c.MaxMemory <= 0 {
			bad("max_memory", "must be a positive number of bytes, got %d", c.MaxMemory)
		}
		if c.MaxStore <= 0 {
			bad("max_store", "must be a positive number of bytes, got %d", c.MaxStore)
		}
		if c.Replicas != 1 {
			bad("replicas", "must be 1 for the embedded server, got %d", c.Replicas)
		}
	} else {
		if !strings.Contains(c.URL, "://") {
			bad("url", "%q is not a NATS URL (nats://host:port)", c.URL)
		}
		if c.Replicas < 1 || c.Replicas > 5 {
			bad("replicas", "must be between 1 and 5, got %d", c.Replicas)
		}
	}
	if err := c.Auth.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.DuplicateWindow <= 0 {
		bad("duplicate_window", "must be positive, got %s", c.DuplicateWindow)
	}
	if err := checkName(c.Consumer); err != nil {
		bad("consumer", "%v", err)
	}
	if c.PublishTimeout < 0 {
		bad("publish_timeout", "must not be negative, got %s", c.PublishTimeout)
	}
	if c.MaxAckPending < 1 {
		bad("max_ack_pending", "must be at least 1, got %d", c.MaxAckPending)
	}
	if c.AckWait <= 0 && len(c.Backoff) == 0 {
		bad("ack_wait", "must be positive, got %s", c.AckWait)
	}
	if c.MaxDeliver < 1 {
		bad("max_deliver", "must be at least 1, got %d", c.MaxDeliver)
	}
	if len(c.Backoff) > c.MaxDeliver {
		bad("backoff", "has %d entries, more than max_deliver (%d)", len(c.Backoff), c.MaxDeliver)
	}
	for i, d := range c.Backoff {
		if d <= 0 {
			bad("backoff", "entry %d must be positive, got %s", i, d)
		}
	}
	if c.EventsMaxAge < 0 || (c.EventsMaxAge > 0 && c.EventsMaxAge < c.DuplicateWindow) {
		bad("events_max_age", "must be 0 (forever) or at least duplicate_window (%s), got %s", c.DuplicateWindow, c.EventsMaxAge)
	}
	if c.DeadMaxAge < 0 || (c.DeadMaxAge > 0 && c.DeadMaxAge < c.DuplicateWindow) {
		bad("dead_max_age", "must be 0 (forever) or at least duplicate_window (%s), got %s", c.DuplicateWindow, c.DeadMaxAge)
	}
	if c.EventsMaxBytes < 0 {
		bad("events_max_bytes", "must be 0 (no limit) or positive, got %d", c.EventsMaxBytes)
	}
	if _, err := c.eventsCompression(); err != nil {
		bad("events_compression", "%v", err)
	}
	if c.LeaseTTL < 300*time.Millisecond {
		bad("lease_ttl", "must be at least 300ms, got %s", c.LeaseTTL)
	}
	if strings.ContainsAny(c.NodeName, "\r\n") {
		bad("node_name", "%q must be one line", c.NodeName)
	}
	if c.DeadMaxBytes < 0 {
		bad("dead_max_bytes", "must be 0 (no limit) or positive, got %d", c.DeadMaxBytes)
	}
	return errors.Join(errs...)
}

// eventsCompression is EventsCompression as JetStream names it.
func (c *Config) eventsCompression() (jetstream.StoreCompression, error) {
	switch c.EventsCompression {
	case "s2":
		return jetstream.S2Compression, nil
	case "none":
		return jetstream.NoCompression, nil
	}
	return jetstream.NoCompression, fmt.Errorf("must be s2 or none, got %q", c.EventsCompression)
}

// splitListen parses host:port, where port -1 means any free port.
func splitListen(listen string) (string, int, error) {
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("%q is not host:port: %w", listen, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < -1 || port > 65535 {
		return "", 0, fmt.Errorf("%q: port must be -1 (any) or 0-65535", listen)
	}
	return host, port, nil
}

// checkName rejects what NATS does not allow in a stream or consumer name.
func checkName(name string) error {
	if name == "" {
		return errors.New("must not be empty")
	}
	if strings.ContainsAny(name, ".*> \t\r\n/\\") {
		return fmt.Errorf("%q must not contain '.', '*', '>', '/', '\\' or white space", name)
	}
	return nil
}
