package sim

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Time forms of the documents a Source writes.
const (
	// Form10 writes a change's time in lastmod, as ResourceSync 1.0 does.
	Form10 = "1.0"
	// Form11 writes a change's time in rs:md datetime and the resource's
	// modification time in lastmod, as the 1.1 revision does.
	Form11 = "1.1"
)

// Config describes a simulated Source. Zero fields take the defaults named
// in their comments; New validates the result.
type Config struct {
	// Resources is how many resources exist when the Source starts.
	Resources int `yaml:"resources"`
	// MinSize and MaxSize bound a bitstream's size in bytes; each version's
	// size is drawn uniformly between them from the seed. Defaults 256 and
	// 4096.
	MinSize int64 `yaml:"min_size"`
	MaxSize int64 `yaml:"max_size"`
	// Seed makes content, sizes and the choice of mutations reproducible.
	Seed int64 `yaml:"seed"`
	// TimeForm is "1.0" (change time in lastmod) or "1.1" (change time in
	// rs:md datetime, plus lastmod). Default "1.1".
	TimeForm string `yaml:"time_form"`
	// UntimedDeletions leaves both lastmod and rs:md datetime out of
	// deletions in Change Lists and change notifications, as Sources in
	// the 1.0 style that date a resource by its lastmod do: a deleted
	// resource has none. (Change Dump manifests keep their times.)
	UntimedDeletions bool `yaml:"untimed_deletions"`
	// Rate is how many changes per second Run applies; 0 means changes
	// happen only when a caller asks for them.
	Rate float64 `yaml:"rate"`
	// Mix weighs the kinds of change Mutate and Run choose. Default 1:3:1.
	Mix Mix `yaml:"mix"`
	// Period is the time one closed Change List covers. Default 1h.
	Period time.Duration `yaml:"period"`
	// PartSize is the most entries one Resource List holds; past it the
	// Source serves a Resource List Index. Default 50,000, the spec's limit.
	PartSize int `yaml:"part_size"`
	// ChangeListSize is the most entries one Change List holds; a period
	// with more changes is served as several lists with consecutive
	// intervals. Default 50,000, the spec's limit. (The simulated
	// entries, under 1 KiB each, never reach the 50 MB cap first.)
	ChangeListSize int `yaml:"changelist_size"`
	// Hashes are the algorithms declared in hash attributes: "md5",
	// "sha-256" or both. Default both.
	Hashes []string `yaml:"hashes"`
	// NoChangeLists makes the Source offer only its Resource List, as Sources
	// that publish no changes do.
	NoChangeLists bool `yaml:"no_change_lists"`
	// Dumps makes the Source offer a Resource Dump and, with Change
	// Lists, a Change Dump, their ZIP packages built when asked for.
	Dumps bool `yaml:"dumps"`
	// BaseURL is the Source's own URL (scheme and authority) used in every
	// loc. When empty, the Host of each request is used, until SetBaseURL or
	// Listen fixes it.
	BaseURL string `yaml:"base_url"`
	// Now is the Source's clock; tests set it to control Change List
	// periods. Default time.Now.
	Now func() time.Time `yaml:"-"`
}

// Mix holds relative weights of creations, updates and deletions.
type Mix struct {
	Create int `yaml:"create"`
	Update int `yaml:"update"`
	Delete int `yaml:"delete"`
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.MinSize == 0 && c.MaxSize == 0 {
		c.MinSize, c.MaxSize = 256, 4096
	}
	if c.TimeForm == "" {
		c.TimeForm = Form11
	}
	if c.Mix == (Mix{}) {
		c.Mix = Mix{Create: 1, Update: 3, Delete: 1}
	}
	if c.Period == 0 {
		c.Period = time.Hour
	}
	if c.PartSize == 0 {
		c.PartSize = 50000
	}
	if c.ChangeListSize == 0 {
		c.ChangeListSize = 50000
	}
	if len(c.Hashes) == 0 {
		c.Hashes = []string{resourcesync.MD5, resourcesync.SHA256}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// validate reports the first field that cannot work, by its YAML name.
func (c Config) validate() error {
	switch {
	case c.Resources < 0:
		return errors.New("resources: must not be negative")
	case c.MinSize < 0 || c.MaxSize < c.MinSize:
		return fmt.Errorf("min_size, max_size: want 0 <= min_size <= max_size, have %d and %d", c.MinSize, c.MaxSize)
	case c.TimeForm != Form10 && c.TimeForm != Form11:
		return fmt.Errorf("time_form: want %q or %q, have %q", Form10, Form11, c.TimeForm)
	case c.Rate < 0:
		return errors.New("rate: must not be negative")
	case c.Mix.Create < 0 || c.Mix.Update < 0 || c.Mix.Delete < 0:
		return errors.New("mix: weights must not be negative")
	case c.Period < time.Second:
		return fmt.Errorf("period: want at least 1s, have %s", c.Period)
	case c.PartSize < 1 || c.PartSize > 50000:
		return fmt.Errorf("part_size: want 1 to 50000, have %d", c.PartSize)
	case c.ChangeListSize < 1 || c.ChangeListSize > 50000:
		return fmt.Errorf("changelist_size: want 1 to 50000, have %d", c.ChangeListSize)
	}
	for _, h := range c.Hashes {
		if h != resourcesync.MD5 && h != resourcesync.SHA256 {
			return fmt.Errorf("hashes: want %q or %q, have %q", resourcesync.MD5, resourcesync.SHA256, h)
		}
	}
	if c.BaseURL != "" {
		if err := checkBase(c.BaseURL); err != nil {
			return fmt.Errorf("base_url: %w", err)
		}
	}
	return nil
}

func checkBase(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("%q: want scheme and authority only, like http://127.0.0.1:8081", s)
	}
	return nil
}
