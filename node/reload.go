package node

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/republish"
)

// ReloadResult is what a reload changed: the Sources added, removed,
// changed and left as they were, and the collections it began to
// republish. NeedRestart names the sections that refused a reload.
type ReloadResult struct {
	harvester.ReloadResult
	Collections []string `json:"collections_added,omitempty"`
	NeedRestart []string `json:"need_restart,omitempty"`
}

// ReloadConfig applies a configuration read again while the node runs,
// whole or not at all. Its Sources (added, removed, schedules and limits
// changed) take effect now, and the collections of added Sources are
// republished at once: Capability List, Source Description entry and hub
// topic, before the Source's first pass. A collection left without a
// Source stays served, with what the catalog holds of it. Any other
// section that differs from the running one takes effect only at a
// restart: then nothing is reloaded, and the error (in the answer and the
// log) names those sections. cfg has been filled and validated.
func (n *Node) ReloadConfig(ctx context.Context, cfg Config) (ReloadResult, error) {
	var res ReloadResult
	if res.NeedRestart = restartSections(n.cfg, cfg); len(res.NeedRestart) > 0 {
		err := fmt.Errorf("configuration not reloaded: %s changed, which takes effect only at a restart; restart the node, or undo those changes to reload the rest",
			strings.Join(res.NeedRestart, ", "))
		n.log.Warn("configuration not reloaded: sections changed that need a restart", "sections", res.NeedRestart)
		return res, err
	}
	added, err := n.addCollections(ctx, cfg.Republish.Collections)
	if err != nil {
		return res, err
	}
	res.Collections = added
	if res.ReloadResult, err = n.roles.harv.Reload(cfg.Sources); err != nil {
		return res, err
	}
	n.roles.leases.Reconfigure(ctx, len(cfg.Sources), res.Removed)
	n.mu.Lock()
	n.cfg.Sources = cfg.Sources
	n.mu.Unlock()
	n.log.Info("configuration reloaded", "added", res.Added, "removed", res.Removed, "changed", res.Changed,
		"unchanged", res.Unchanged, "collections_added", added)
	return res, nil
}

// addCollections republishes the collections of cols not served yet, and
// opens their topics on the node's hub.
func (n *Node) addCollections(ctx context.Context, cols []republish.Collection) ([]string, error) {
	if n.repub == nil {
		return nil, nil
	}
	added, err := n.repub.AddCollections(ctx, cols...)
	if err != nil {
		return nil, fmt.Errorf("configuration not reloaded: %w", err)
	}
	topics := n.repub.Topics()
	for _, c := range added {
		if t, ok := topics[c]; ok && n.note.Hub() != nil {
			n.note.Hub().AddTopic(t)
		}
	}
	n.mu.Lock()
	n.cfg.Republish.Collections = cols
	n.mu.Unlock()
	return added, nil
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
