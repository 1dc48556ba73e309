package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Config is how viaduct talks to upstream hosts. The zero value is not
// usable; start from DefaultConfig and change what the operator set.
// Per-Source differences (extra mirrors, a private Source) are expressed by
// building one Policy per Source from a copy of the Config.
type Config struct {
	// UserAgent is sent with every request; upstream operators read it to
	// know who is harvesting them and where to complain.
	UserAgent string `yaml:"user_agent"`

	// ConnectTimeout bounds the TCP connect and TLS handshake.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// ResponseHeaderTimeout bounds the wait for the response headers once
	// the request is sent.
	ResponseHeaderTimeout time.Duration `yaml:"response_header_timeout"`
	// RequestTimeout bounds one attempt from start to the end of reading its
	// body, so it must allow for the largest bitstream at a slow rate.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// MinBodyRate and BodyRateWindow fail a body (document or bitstream)
	// that a Source feeds slower than MinBodyRate bytes per second over a
	// window of BodyRateWindow spent waiting for it, so that a trickling
	// Source holds a host slot and a worker for one window, not for the
	// whole RequestTimeout. The failure is transient: retried as any
	// other. A window with nothing read at all fails even with a rate of
	// 0; a BodyRateWindow of 0 turns the check off. Defaults 1024 bytes/s
	// over 30s.
	MinBodyRate    int64         `yaml:"min_body_rate"`
	BodyRateWindow time.Duration `yaml:"body_rate_window"`

	// MaxAttempts is how many times one URI is tried before a transient
	// failure is returned (1 means no retry).
	MaxAttempts int `yaml:"max_attempts"`
	// BackoffBase and BackoffMax shape the wait between attempts: a random
	// duration up to BackoffBase*2^(attempt-1), never above BackoffMax.
	BackoffBase time.Duration `yaml:"backoff_base"`
	BackoffMax  time.Duration `yaml:"backoff_max"`
	// RetryAfterMax caps how long a Retry-After header may make viaduct
	// wait before the next attempt.
	RetryAfterMax time.Duration `yaml:"retry_after_max"`

	// PerHostConcurrency is how many requests to one host (authority) may
	// be under way at once, bodies being read included.
	PerHostConcurrency int `yaml:"per_host_concurrency"`
	// PerHostRate is how many requests per second are started against one
	// host; PerHostBurst how many may start at once after a quiet period.
	PerHostRate  float64 `yaml:"per_host_rate"`
	PerHostBurst int     `yaml:"per_host_burst"`

	// MaxRedirects is how many redirects one request may follow.
	MaxRedirects int `yaml:"max_redirects"`
	// MaxDocumentBytes caps a body (after decoding) when a Request does not
	// say otherwise.
	MaxDocumentBytes int64 `yaml:"max_document_bytes"`

	// AllowedAuthorities are extra authorities ("https://mirror.example.org"
	// or "http://host:8080") every Source may fetch from besides its own,
	// such as mirrors named by rel="duplicate" links.
	AllowedAuthorities []string `yaml:"allowed_authorities"`
	// AllowPrivate permits private addresses (RFC 1918, RFC 6598, IPv6
	// unique local). Off by default: an upstream document must not be able
	// to make viaduct reach into the operator's network.
	AllowPrivate bool `yaml:"allow_private"`
	// AllowLoopback permits loopback addresses; for tests and the demo.
	AllowLoopback bool `yaml:"allow_loopback"`

	// Resolve replaces DNS resolution; nil uses the system resolver. Tests
	// use it to make a public-looking name resolve to 127.0.0.1.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error) `yaml:"-"`
	// Dial replaces the connect step once an address has passed the
	// checks; nil uses a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `yaml:"-"`
	// Sleep waits between attempts; nil waits on a timer. Tests record the
	// waits instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error `yaml:"-"`
	// Now is the clock used to read Retry-After dates; nil is time.Now.
	Now func() time.Time `yaml:"-"`
}

// DefaultUserAgent is the User-Agent of viaduct at version.
func DefaultUserAgent(version string) string {
	if version == "" {
		version = "dev"
	}
	return "viaduct/" + version + " (ResourceSync aggregator; +https://github.com/viaduct-mirror/viaduct)"
}

// DefaultConfig is the Config an operator gets without saying anything.
func DefaultConfig() Config {
	return Config{
		UserAgent:             DefaultUserAgent("dev"),
		ConnectTimeout:        10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		RequestTimeout:        10 * time.Minute,
		MinBodyRate:           1024,
		BodyRateWindow:        30 * time.Second,
		MaxAttempts:           4,
		BackoffBase:           500 * time.Millisecond,
		BackoffMax:            30 * time.Second,
		RetryAfterMax:         5 * time.Minute,
		PerHostConcurrency:    4,
		PerHostRate:           10,
		PerHostBurst:          4,
		MaxRedirects:          5,
		MaxDocumentBytes:      64 << 20,
	}
}

// Validate reports the first setting that cannot work, naming its field.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, why string, v any) {
		errs = append(errs, fmt.Errorf("upstream: %s %v: %s", field, v, why))
	}
	if c.UserAgent == "" {
		bad("user_agent", "must name viaduct", `""`)
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"connect_timeout", c.ConnectTimeout},
		{"response_header_timeout", c.ResponseHeaderTimeout},
		{"request_timeout", c.RequestTimeout},
		{"backoff_base", c.BackoffBase},
		{"backoff_max", c.BackoffMax},
		{"retry_after_max", c.RetryAfterMax},
	} {
		if d.v <= 0 {
			bad(d.field, "must be positive", d.v)
		}
	}
	if c.BackoffMax < c.BackoffBase {
		bad("backoff_max", "must not be below backoff_base", c.BackoffMax)
	}
	if c.MinBodyRate < 0 {
		bad("min_body_rate", "must not be negative", c.MinBodyRate)
	}
	if c.BodyRateWindow < 0 {
		bad("body_rate_window", "must not be negative", c.BodyRateWindow)
	}
	if c.MaxAttempts < 1 {
		bad("max_attempts", "must be at least 1", c.MaxAttempts)
	}
	if c.PerHostConcurrency < 1 {
		bad("per_host_concurrency", "must be at least 1", c.PerHostConcurrency)
	}
	if c.PerHostRate <= 0 {
		bad("per_host_rate", "must be positive", c.PerHostRate)
	}
	if c.PerHostBurst < 1 {
		bad("per_host_burst", "must be at least 1", c.PerHostBurst)
	}
	if c.MaxRedirects < 0 {
		bad("max_redirects", "must not be negative", c.MaxRedirects)
	}
	if c.MaxDocumentBytes < 1 {
		bad("max_document_bytes", "must be positive", c.MaxDocumentBytes)
	}
	for i, a := range c.AllowedAuthorities {
		if _, err := ParseAuthority(a); err != nil {
			bad(fmt.Sprintf("allowed_authorities[%d]", i), err.Error(), fmt.Sprintf("%q", a))
		}
	}
	return errors.Join(errs...)
}
