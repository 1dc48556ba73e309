package harvester

import (
	"context"
	"errors"
	"io"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// descriptionIndex reads a Source Description Index (a sitemapindex with
// capability="description", for a Source with more Capability Lists than
// one document holds): every part in turn, their Capability Lists
// together. A part that cannot be read is noted and the others kept.
func (d *discoverer) descriptionIndex(ctx context.Context, uri string, rd *resourcesync.Reader) {
	parts := d.indexEntries(uri, rd)
	d.out.SourceDescription = uri
	var all []CapabilityList
	for _, part := range parts {
		if ctx.Err() != nil || d.seen[part] {
			continue
		}
		d.seen[part] = true
		resp, err := d.get(ctx, part, 0)
		if err != nil {
			continue
		}
		prd, err := resourcesync.NewReader(resp.Body, resourcesync.Limits{MaxEntries: maxCapLists})
		if err != nil || prd.Header().Kind() != resourcesync.KindSourceDescription {
			resp.Body.Close()
			d.note("%s: part of Source Description Index %s is not a Source Description (%v)", part, uri, err)
			continue
		}
		d.sourceDescription(resp.URI, prd)
		resp.Body.Close()
		all = append(all, d.out.CapabilityLists...)
		if len(all) >= maxCapLists {
			d.note("%s: Capability Lists after the first %d ignored", uri, maxCapLists)
			all = all[:maxCapLists]
			break
		}
	}
	d.out.SourceDescription = uri
	d.out.CapabilityLists = all
}

// capabilityListIndex reads a Capability List Index: its entries are the
// Source's Capability Lists.
func (d *discoverer) capabilityListIndex(uri string, rd *resourcesync.Reader) {
	d.out.Index = uri
	d.out.CapabilityLists = nil
	for _, cl := range d.indexEntries(uri, rd) {
		d.out.CapabilityLists = append(d.out.CapabilityLists, CapabilityList{URI: cl})
	}
}

// indexEntries returns the locs of an index, resolved against its URI.
func (d *discoverer) indexEntries(uri string, rd *resourcesync.Reader) []string {
	var out []string
	for len(out) < maxCapLists {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		var re *resourcesync.Error
		if err != nil && errors.As(err, &re) && !re.Fatal {
			d.note("%s: entry skipped: %v", uri, err)
			continue
		}
		if err != nil {
			d.errs = append(d.errs, err)
			d.note("%s: %v", uri, err)
			break
		}
		out = append(out, resolve(uri, e.Loc))
	}
	return out
}
