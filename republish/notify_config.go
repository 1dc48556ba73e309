package republish

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/viaduct-mirror/viaduct/websub"
)

// NotifyConfig is how the aggregator pushes its changes downstream: one
// WebSub topic per collection, served by viaduct's own hub (by default)
// or by an external one.
type NotifyConfig struct {
	// Enabled advertises a change-notification topic per collection and
	// publishes on it. viaduct serve turns it on by default.
	Enabled bool `yaml:"enabled"`
	// ExternalHub, when set, is the URL of a hub viaduct does not run:
	// notifications are POSTed to it and it is the hub the Capability
	// Lists name. viaduct's own hub is then not started.
	ExternalHub string `yaml:"external_hub"`
	// Hub is viaduct's own hub: lease bounds (min_lease 300 s, max_lease
	// one month, default_lease 10 days), delivery retries (retry_min
	// 10 s doubling to retry_max 1 h), timeouts and max_subscriptions.
	// Its url defaults to <base_url>/hub, where it is mounted.
	Hub websub.HubConfig `yaml:"hub"`
	// AllowLoopbackCallbacks lets subscribers give callbacks on loopback
	// or private addresses, for tests and demonstrations on one machine.
	// Off by default: a hub should not be a way into the local network.
	AllowLoopbackCallbacks bool `yaml:"allow_loopback_callbacks"`
	// Window is how often the notifier looks for changes to notify when
	// nothing wakes it, and the first delay of its retries. In a node the
	// applier wakes it after each batch, so a change goes out as soon as
	// it is in the catalog and a batch is one payload. Default 100 ms; at
	// most 1 minute.
	Window time.Duration `yaml:"window"`
	// MaxEntries is the most changes one payload holds; more are split
	// into consecutive payloads. Default 1,000; at most 10,000 (what a
	// Subscriber accepts by default).
	MaxEntries int `yaml:"max_entries"`
	// MaxQueued is the most notifications queued for one subscriber of
	// viaduct's hub; a subscriber further behind misses the newest and
	// sees a gap. Default 10,000.
	MaxQueued int64 `yaml:"max_queued"`
	// QueueMaxBytes caps all subscribers' queues together. Default 1 GiB.
	QueueMaxBytes int64 `yaml:"queue_max_bytes"`
}

// NotifyDefaults is the configuration viaduct serve starts from:
// notifications on, through viaduct's own hub.
func NotifyDefaults() NotifyConfig {
	return NotifyConfig{Enabled: true, Window: 100 * time.Millisecond, MaxEntries: 1000, MaxQueued: 10000, QueueMaxBytes: 1 << 30}
}

// withDefaults fills the zero fields that have a default.
func (c NotifyConfig) withDefaults() NotifyConfig {
	d := NotifyDefaults()
	if c.Window == 0 {
		c.Window = d.Window
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = d.MaxEntries
	}
	if c.MaxQueued == 0 {
		c.MaxQueued = d.MaxQueued
	}
	if c.QueueMaxBytes == 0 {
		c.QueueMaxBytes = d.QueueMaxBytes
	}
	return c
}

// Validate names the first field that is wrong.
func (c NotifyConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.ExternalHub != "" {
		if u, err := url.Parse(c.ExternalHub); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("external_hub: %q is not an http(s) URL", c.ExternalHub))
		}
	}
	if c.Hub.URL != "" {
		if u, err := url.Parse(c.Hub.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("hub.url: %q is not an http(s) URL", c.Hub.URL))
		}
	}
	if c.Hub.MinLease < 0 || c.Hub.MaxLease < 0 || c.Hub.DefaultLease < 0 {
		errs = append(errs, errors.New("hub: leases must not be negative"))
	}
	if c.Hub.MinLease > 0 && c.Hub.MaxLease > 0 && c.Hub.MinLease > c.Hub.MaxLease {
		errs = append(errs, fmt.Errorf("hub.min_lease %s: longer than max_lease %s", c.Hub.MinLease, c.Hub.MaxLease))
	}
	if c.Window < time.Millisecond || c.Window > time.Minute {
		errs = append(errs, fmt.Errorf("window %s: between 1ms and 1m", c.Window))
	}
	if c.MaxEntries < 1 || c.MaxEntries > 10000 {
		errs = append(errs, fmt.Errorf("max_entries %d: between 1 and 10000", c.MaxEntries))
	}
	if c.MaxQueued < 1 || c.QueueMaxBytes < 1 {
		errs = append(errs, errors.New("max_queued and queue_max_bytes must be positive"))
	}
	return errors.Join(errs...)
}
