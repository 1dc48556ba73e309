package republish

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Config is how the republisher presents the aggregator as a ResourceSync
// Source.
type Config struct {
	// BaseURL is the public URL the server is reached at, such as
	// https://mirror.example.org; every URI in every document starts with
	// it. Required; http or https, no query or fragment.
	BaseURL string `yaml:"base_url"`
	// Collections are the sets of resources, one Capability List each. By
	// default each upstream Source is one collection; several Sources may
	// share one.
	Collections []Collection `yaml:"collections"`
	// ChangeListPeriod is the interval each Change List covers. Lists are
	// aligned on multiples of the period since the Unix epoch (UTC).
	// Default 1h; at least 1s.
	ChangeListPeriod time.Duration `yaml:"changelist_period"`
	// MaxEntries is the most entries a Resource List part holds before the
	// Resource List becomes an index. Default and maximum 50,000.
	MaxEntries int `yaml:"max_entries"`
	// MaxBytes is the largest a Resource List part may be, uncompressed.
	// Default and maximum 50 MB (52,428,800 bytes).
	MaxBytes int64 `yaml:"max_bytes"`
	// MaxChangeLists is the most Change Lists the Change List Index lists,
	// the most recent ones. Default and maximum 50,000.
	MaxChangeLists int `yaml:"max_changelists"`
	// CapabilityChangeList is what a collection's Capability List names
	// as its changelist: "index" (default), the Change List Index, which
	// lists every Change List; or "current", the stable URL
	// <collection>/changelist/current.xml of the Change List holding the
	// latest changes, for clients that cannot read a Change List Index
	// (the Python resync client). The index stays served either way. See
	// docs/republish.md for what each costs.
	CapabilityChangeList string `yaml:"capability_changelist"`
	// DescribedBy, when set, is linked from the Source Description with
	// rel="describedby": a page about this mirror.
	DescribedBy string `yaml:"described_by"`
	// Dumps are the Resource Dumps and Change Dumps of every collection.
	Dumps DumpConfig `yaml:"dumps"`
	// Notify is the change-notification channel of each collection (see
	// NotifyConfig); off unless Enabled.
	Notify NotifyConfig `yaml:"notify"`
	// Cache keeps rendered lists to send again while the catalog stays
	// as it was (see CacheConfig).
	Cache CacheConfig `yaml:"cache"`
}

// Collection is one set of resources.
type Collection struct {
	// Name is the collection's name as the catalog knows it; it is also
	// the first path segment of all its URIs, so it is limited to
	// letters, digits, '.', '_' and '-'.
	Name string `yaml:"name"`
	// DescribedBy, when set, is linked from the Capability List.
	DescribedBy string `yaml:"described_by"`
}

// Values of Config.CapabilityChangeList.
const (
	CapabilityIndex   = "index"
	CapabilityCurrent = "current"
)

// Limits of the Sitemap protocol, which ResourceSync adopts.
const (
	SitemapMaxEntries = 50000
	SitemapMaxBytes   = 50 * 1024 * 1024
)

// reserved are first path segments the server uses itself.
var reserved = map[string]bool{"provenance": true, "robots.txt": true, "index.html": true, "favicon.ico": true}

var collectionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// withDefaults returns the configuration with defaults filled in, or an
// error naming the first field that is wrong.
func (c Config) withDefaults() (Config, error) {
	if c.ChangeListPeriod == 0 {
		c.ChangeListPeriod = time.Hour
	}
	if c.MaxEntries == 0 {
		c.MaxEntries = SitemapMaxEntries
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = SitemapMaxBytes
	}
	if c.MaxChangeLists == 0 {
		c.MaxChangeLists = SitemapMaxEntries
	}
	if c.CapabilityChangeList == "" {
		c.CapabilityChangeList = CapabilityIndex
	}
	u, err := url.Parse(c.BaseURL)
	switch {
	case c.BaseURL == "":
		return c, fmt.Errorf("republish: base_url is required")
	case err != nil:
		return c, fmt.Errorf("republish: base_url %q: %w", c.BaseURL, err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.RawQuery != "", u.Fragment != "":
		return c, fmt.Errorf("republish: base_url %q: want http(s)://host[/path] without query or fragment", c.BaseURL)
	case c.ChangeListPeriod < time.Second:
		return c, fmt.Errorf("republish: changelist_period %s: at least 1s", c.ChangeListPeriod)
	case c.MaxEntries < 1 || c.MaxEntries > SitemapMaxEntries:
		return c, fmt.Errorf("republish: max_entries %d: between 1 and %d", c.MaxEntries, SitemapMaxEntries)
	case c.MaxBytes < 4096 || c.MaxBytes > SitemapMaxBytes:
		return c, fmt.Errorf("republish: max_bytes %d: between 4096 and %d", c.MaxBytes, SitemapMaxBytes)
	case c.MaxChangeLists < 1 || c.MaxChangeLists > SitemapMaxEntries:
		return c, fmt.Errorf("republish: max_changelists %d: between 1 and %d", c.MaxChangeLists, SitemapMaxEntries)
	case c.CapabilityChangeList != CapabilityIndex && c.CapabilityChangeList != CapabilityCurrent:
		return c, fmt.Errorf("republish: capability_changelist %q: want %q or %q", c.CapabilityChangeList, CapabilityIndex, CapabilityCurrent)
	case len(c.Collections) == 0:
		return c, fmt.Errorf("republish: collections: at least one is needed")
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.Cache, err = c.Cache.withDefaults(); err != nil {
		return c, err
	}
	if c.Dumps, err = c.Dumps.withDefaults(); err != nil {
		return c, err
	}
	seen := map[string]bool{}
	for i, col := range c.Collections {
		if err := checkCollectionName(col.Name); err != nil {
			return c, fmt.Errorf("republish: collections[%d].name: %w", i, err)
		}
		if seen[col.Name] {
			return c, fmt.Errorf("republish: collections[%d].name %q: listed twice", i, col.Name)
		}
		seen[col.Name] = true
	}
	return c, nil
}

// checkCollectionName says why name cannot be a collection's, if it cannot.
func checkCollectionName(name string) error {
	if reserved[name] {
		return fmt.Errorf("%q: reserved for the server's own paths", name)
	}
	if !collectionName.MatchString(name) {
		return fmt.Errorf("%q: letters, digits, '.', '_', '-' only", name)
	}
	return nil
}

// configID identifies the configuration's effect on documents, for the
// entity tags of documents that depend on nothing else.
func configID(c Config) string {
	c.Cache = CacheConfig{} // where a node keeps its copies changes no document
	return etagOf(fmt.Sprintf("%+v", c))
}
