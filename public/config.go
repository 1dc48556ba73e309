package public

import (
	"errors"
	"fmt"
	"time"
)

// Config bounds what Destinations, known or not, may hold of the
// node through its public listener, so that slow or stalled clients cost
// only their own responses and the node goes on harvesting and applying
// (docs/security.md, "Slow and stalled peers").
type Config struct {
	// ReadTimeout bounds reading one request, headers and body. Default 30s.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds each write to a client: a write blocks only
	// while the client does not read, so a 50,000-entry list or a dump of
	// any size completes at any honest rate, and a client that stops
	// reading is cut off after WriteTimeout. Default 60s.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection that has sent no new
	// request for that long. Default 60s.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxConns bounds the connections open at once. Past it, a new
	// connection takes the place of the longest silent one (no request in
	// flight and none arrived unread), or is answered 503 with
	// Retry-After and closed when none is; the listener never
	// stops accepting, so a crowd of idle connections cannot lock out a
	// Destination. 0 picks half of the process's open-file limit (at most
	// 16384), leaving the rest to fetch workers, NATS, SQLite and the blob
	// store.
	MaxConns int `yaml:"max_conns"`
	// MaxConnsPerClient bounds the connections of one client address; past
	// it a new one is answered 503 with Retry-After and closed. Default 64.
	MaxConnsPerClient int `yaml:"max_conns_per_client"`
	// MaxExpensive bounds the costly requests served at once: Resource and
	// Change Lists and their Indexes (catalog scans), dump packages. Past
	// it the answer is 503 with Retry-After. Default 32.
	MaxExpensive int `yaml:"max_expensive"`
	// RetryAfter is what a 503 for MaxExpensive, MaxConns or
	// MaxConnsPerClient tells the client to wait.
	// Default 5s.
	RetryAfter time.Duration `yaml:"retry_after"`
}

// Defaults is the Config of a one-machine node.
func Defaults() Config {
	return Config{
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxConnsPerClient: 64,
		MaxExpensive:      32,
		RetryAfter:        5 * time.Second,
	}
}

// Validate names the first field that cannot work.
func (c *Config) Validate() error {
	var errs []error
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"read_timeout", c.ReadTimeout}, {"write_timeout", c.WriteTimeout}, {"idle_timeout", c.IdleTimeout}, {"retry_after", c.RetryAfter}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("public.%s: must be positive, got %s", d.field, d.v))
		}
	}
	if c.MaxConns < 0 {
		errs = append(errs, fmt.Errorf("public.max_conns: must not be negative, got %d", c.MaxConns))
	}
	if c.MaxConnsPerClient < 1 {
		errs = append(errs, fmt.Errorf("public.max_conns_per_client: must be at least 1, got %d", c.MaxConnsPerClient))
	}
	if c.MaxExpensive < 1 {
		errs = append(errs, fmt.Errorf("public.max_expensive: must be at least 1, got %d", c.MaxExpensive))
	}
	return errors.Join(errs...)
}

// maxConns is MaxConns, or half the open-file limit when it is 0.
func (c *Config) maxConns() int {
	if c.MaxConns > 0 {
		return c.MaxConns
	}
	return max(64, min(openFileLimit()/2, 16384))
}
