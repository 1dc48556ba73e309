package websub

import (
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"net/http"
	"time"
)

// Lease bounds WebSub recommends, which the Hub grants within.
const (
	MinLease     = 300 * time.Second
	MaxLease     = 2678400 * time.Second // one month of 31 days
	DefaultLease = 10 * 24 * time.Hour
)

// HubConfig is the hub an operator runs for downstream Destinations.
type HubConfig struct {
	// URL is the hub's public URL, sent in Link headers and advertised in
	// Capability Lists. Required.
	URL string `yaml:"url"`
	// MinLease and MaxLease bound the leases granted; a request outside is
	// clamped. Defaults 300 s and 2,678,400 s (one month).
	MinLease time.Duration `yaml:"min_lease"`
	MaxLease time.Duration `yaml:"max_lease"`
	// DefaultLease is granted when a subscriber asks for none. Default 10
	// days.
	DefaultLease time.Duration `yaml:"default_lease"`
	// RetryMin is the wait after a subscriber's first failure; each
	// further failure doubles it up to RetryMax. Defaults 10 s and 1 h.
	RetryMin time.Duration `yaml:"retry_min"`
	RetryMax time.Duration `yaml:"retry_max"`
	// DeliveryTimeout bounds one delivery POST and VerifyTimeout one
	// verification GET. Defaults 30 s and 10 s.
	DeliveryTimeout time.Duration `yaml:"delivery_timeout"`
	VerifyTimeout   time.Duration `yaml:"verify_timeout"`
	// MaxSubscriptions bounds the subscriptions held, verified or
	// pending, across topics. Default 10,000.
	MaxSubscriptions int `yaml:"max_subscriptions"`
}

// HubOptions are what a Hub is built from besides its Config.
type HubOptions struct {
	Store  Store  // required
	Outbox Outbox // required
	// Client makes the verification and delivery requests. Default: a
	// client that never follows redirects. A caller's client should not
	// follow redirects either, and should refuse to dial addresses the
	// operator does not allow.
	Client *http.Client
	// Policy decides which callbacks may be called. Default
	// DefaultCallbackPolicy.
	Policy CallbackPolicy
	Clock  Clock        // default SystemClock
	Logger *slog.Logger // default: discard
	// TracerProvider makes the span of each delivery; nil uses the
	// global provider.
	TracerProvider trace.TracerProvider
}

// withDefaults fills zero fields and checks the rest, naming the field.
func (c HubConfig) withDefaults() (HubConfig, error) {
	if _, ok := httpURL(c.URL); !ok {
		return c, fmt.Errorf("websub hub config: url %q is not an absolute http(s) URL", c.URL)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.MinLease, MinLease)
	def(&c.MaxLease, MaxLease)
	def(&c.DefaultLease, DefaultLease)
	def(&c.RetryMin, 10*time.Second)
	def(&c.RetryMax, time.Hour)
	def(&c.DeliveryTimeout, 30*time.Second)
	def(&c.VerifyTimeout, 10*time.Second)
	if c.MaxSubscriptions == 0 {
		c.MaxSubscriptions = 10000
	}
	switch {
	case c.MinLease < time.Second || c.MaxLease < c.MinLease:
		return c, fmt.Errorf("websub hub config: min_lease %v and max_lease %v: need 1s <= min_lease <= max_lease", c.MinLease, c.MaxLease)
	case c.DefaultLease < c.MinLease || c.DefaultLease > c.MaxLease:
		return c, fmt.Errorf("websub hub config: default_lease %v is outside [min_lease, max_lease]", c.DefaultLease)
	case c.RetryMin <= 0 || c.RetryMax < c.RetryMin:
		return c, fmt.Errorf("websub hub config: retry_min %v and retry_max %v: need 0 < retry_min <= retry_max", c.RetryMin, c.RetryMax)
	case c.DeliveryTimeout < 0 || c.VerifyTimeout < 0:
		return c, fmt.Errorf("websub hub config: delivery_timeout and verify_timeout must not be negative")
	case c.MaxSubscriptions < 0:
		return c, fmt.Errorf("websub hub config: max_subscriptions %d is negative", c.MaxSubscriptions)
	}
	return c, nil
}

// clampLease is the lease granted for a request of req seconds (0: none).
func (c *HubConfig) clampLease(req int64) time.Duration {
	if req <= 0 {
		return c.DefaultLease
	}
	d := c.MaxLease
	if req < int64(c.MaxLease/time.Second) {
		d = time.Duration(req) * time.Second
	}
	return min(max(d, c.MinLease), c.MaxLease)
}

// noRedirectClient is the default client of hubs and subscribers: a
// callback or hub that redirects is answered with its 3xx as a failure.
func noRedirectClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
