package node

import (
	"context"
	"fmt"
	"reflect"

	"github.com/viaduct-mirror/viaduct/harvester"
)

// ReloadResult is what a reload changed, and the sections of the file
// that differ but take effect only at the next start.
type ReloadResult struct {
	harvester.ReloadResult
	NeedRestart []string `json:"need_restart,omitempty"`
}

// ReloadConfig applies a configuration read again while the node runs:
// its Sources (added, removed, schedules and limits changed) take effect
// now. Every other section is compared with the running one, and those
// that differ are named in the result and the log: they take effect at
// the next start. cfg has been filled and validated.
func (n *Node) ReloadConfig(ctx context.Context, cfg Config) (ReloadResult, error) {
	var res ReloadResult
	var err error
	if res.ReloadResult, err = n.roles.harv.Reload(cfg.Sources); err != nil {
		return res, err
	}
	n.roles.leases.reconfigure(ctx, len(cfg.Sources), res.Removed)
	res.NeedRestart = restartSections(n.cfg, cfg)
	if len(res.NeedRestart) > 0 {
		n.log.Warn("configuration reloaded; these sections changed and take effect at the next start", "sections", res.NeedRestart)
	}
	n.mu.Lock()
	n.cfg.Sources = cfg.Sources
	n.mu.Unlock()
	return res, nil
}

// restartSections names the top-level sections, other than sources, in
// which b differs from a.
func restartSections(a, b Config) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("yaml")
		if name == "sources" || name == "" || name == "-" {
			continue
		}
		if f.Name == "Republish" {
			// The node fills in the base URL and collections at start.
			ra, rb := a.Republish, b.Republish
			rb.BaseURL, rb.Collections = ra.BaseURL, ra.Collections
			if !reflect.DeepEqual(ra, rb) {
				out = append(out, name)
			}
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, fmt.Sprint(name))
		}
	}
	return out
}

// reconfigure tells the leases how many Sources there are now, so each
// node's share follows, and gives up the leases of removed Sources.
func (l *sourceLeases) reconfigure(ctx context.Context, sources int, removed []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.sources = sources
	gone := map[string]*heldSource{}
	for _, name := range removed {
		if hs := l.held[name]; hs != nil {
			gone[name] = hs
			delete(l.held, name)
		}
	}
	l.mu.Unlock()
	for name, hs := range gone {
		if err := hs.lease.Release(ctx); err != nil {
			l.log.Warn("giving up the lease of a removed source", "source", name, "err", err)
		}
	}
}
