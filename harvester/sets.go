package harvester

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// capSet is one capability set of a Source: one Capability List and the
// collection its resources go to. A Source Description may list several
// (Timbuctoo lists one per dataset; a Capability List Index or a Source
// Description Index lists more); each is harvested, none is skipped.
type capSet struct {
	// URI is the set's Capability List.
	URI string
	// Collection is where its resources go: the Source's collection
	// unless SourceConfig.SetCollections names another for URI.
	Collection string
	// Key names the set's cursors: "" for the primary set, whose cursors
	// are the Source's own (so a Source that grows a second set keeps its
	// position in the first), else a stable hash of URI (setKey).
	Key string
}

// curDescription is the Source Description (or its Index) discovery
// found, read again at every pass to find the Source's capability sets.
const curDescription = "sourcedescription"

// noDescription is curDescription's value for a Source found to have no
// Source Description or Capability List Index: one set, nothing to read
// again.
const noDescription = "none"

// setKey names a non-primary set's cursors: the first 16 hex digits of
// the SHA-256 of its Capability List's URI, stable across passes and
// across the order the Source Description lists its sets in.
func setKey(uri string) string {
	sum := sha256.Sum256([]byte(uri))
	return hex.EncodeToString(sum[:8])
}

// sets finds the Source's capability sets. The primary set is the
// Capability List remembered in curCapabilities (found by discovery the
// first time: the one the configured URL is or leads to, else the
// Source Description's first); the others are every other Capability
// List of the remembered Source Description, read again at each pass so
// that a dataset the Source adds is harvested from its next pass on.
// When the Source Description cannot be read, only the primary set is
// harvested that pass, with a warning.
func (p *pass) sets(ctx context.Context) ([]*capSet, error) {
	primary, err := p.h.deps.Cursors.Cursor(ctx, p.src.Name, curCapabilities)
	if err != nil {
		return nil, fmt.Errorf("source %s: read cursor %s: %w", p.src.Name, curCapabilities, err)
	}
	var lists []CapabilityList
	if primary == "" {
		d, err := p.discoverAll(ctx)
		if err != nil {
			return nil, err
		}
		primary = p.pickPrimary(d)
		lists = d.CapabilityLists
		p.discovered = true
		if err := p.set(ctx, curCapabilities, primary); err != nil {
			return nil, err
		}
		if err := p.set(ctx, curDescription, cmp.Or(d.listsFrom(), noDescription)); err != nil {
			return nil, err
		}
	} else {
		sd, err := p.h.deps.Cursors.Cursor(ctx, p.src.Name, curDescription)
		if err != nil {
			return nil, fmt.Errorf("source %s: read cursor %s: %w", p.src.Name, curDescription, err)
		}
		if sd == "" {
			// Cursors kept before the sets were remembered: discover once.
			sd = p.src.URL
		}
		if sd != noDescription {
			d, err := Discover(ctx, p.client, p.src.Name, sd)
			switch {
			case err != nil:
				p.log.Warn("Source Description unreadable, harvesting only the primary Capability List this pass", "uri", sd, "err", err)
			case d.listsFrom() == "":
				if err := p.set(ctx, curDescription, noDescription); err != nil {
					return nil, err
				}
			default:
				lists = d.CapabilityLists
				if d.listsFrom() != sd {
					if err := p.set(ctx, curDescription, d.listsFrom()); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	out := []*capSet{{URI: primary, Collection: p.src.Collection}}
	seen := map[string]bool{primary: true}
	for _, cl := range lists {
		if seen[cl.URI] {
			continue
		}
		seen[cl.URI] = true
		out = append(out, &capSet{URI: cl.URI, Collection: p.src.setCollection(cl.URI), Key: setKey(cl.URI)})
	}
	if len(out) > 1 {
		p.tolerate(primary, tolSeveralSets, len(out))
	}
	return out, nil
}

// setCollection is the collection of the set whose Capability List is
// uri: SetCollections' entry for it, else the Source's collection.
func (r *resolved) setCollection(uri string) string {
	if c := r.SetCollections[uri]; c != "" {
		return c
	}
	return r.Collection
}

// listsFrom is the document that lists the Source's Capability Lists:
// its Source Description (or Index), else its Capability List Index.
func (d *Discovery) listsFrom() string {
	if d.SourceDescription != "" {
		return d.SourceDescription
	}
	return d.Index
}

// discoverAll runs discovery from the configured URL.
func (p *pass) discoverAll(ctx context.Context) (*Discovery, error) {
	d, err := Discover(ctx, p.client, p.src.Name, p.src.URL)
	if err != nil {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDiscovery).Inc()
		return nil, err // it names the Source and where discovery began
	}
	if len(d.CapabilityLists) == 0 {
		p.h.m.errors.WithLabelValues(p.src.Name, kindDiscovery).Inc()
		return nil, fmt.Errorf("source %s: Source Description %s lists no Capability List", p.src.Name, d.SourceDescription)
	}
	return d, nil
}

// pickPrimary chooses the set whose cursors are the Source's own: the
// Capability List the configured URL is, else the one it led to, else
// the Source Description's first.
func (p *pass) pickPrimary(d *Discovery) string {
	for _, cl := range d.CapabilityLists {
		if cl.URI == p.src.URL {
			return cl.URI
		}
	}
	if d.Reached != "" {
		return d.Reached
	}
	return d.CapabilityLists[0].URI
}
