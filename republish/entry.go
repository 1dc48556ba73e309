package republish

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/provenance"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// entryBuilder turns catalog records into document entries. It reuses one
// Entry and its buffers, so a list of a million entries allocates little;
// an entry is valid until the next call.
type entryBuilder struct {
	s       *Server
	coll    string
	resolve provenance.Resolver
	e       resourcesync.Entry
	md      resourcesync.MD
	hashes  [2]resourcesync.Hash
	length  int64
	links   []resourcesync.Link
	buf     []byte
	// bareLoc leaves the entry's Loc empty: a list writes each entry
	// with write, which takes the URI from buf, so a million-entry list
	// makes no string of each one. Such an entry is only for write: the
	// builder refills the fields it sets and no others.
	bareLoc bool
}

func (s *Server) newEntryBuilder(coll string) *entryBuilder {
	b := &entryBuilder{s: s, coll: coll}
	b.resolve = s.resolver(coll)
	return b
}

// resource describes a held resource, for a Resource List.
func (b *entryBuilder) resource(ctx context.Context, rec *Record) (*resourcesync.Entry, error) {
	if err := b.fill(ctx, rec); err != nil {
		return nil, err
	}
	b.copyFacts(rec)
	return &b.e, nil
}

// change describes one change of the log, for a Change List: lastmod and
// rs:md datetime are both the aggregator's change time, so 1.0 and 1.1
// Destinations read the same order.
func (b *entryBuilder) change(ctx context.Context, rec *Record) (*resourcesync.Entry, error) {
	if err := b.fill(ctx, rec); err != nil {
		return nil, err
	}
	b.md.Change = rec.Op
	b.md.DateTime = rec.At
	if !rec.Deleted() {
		b.copyFacts(rec)
	}
	return &b.e, nil
}

func (b *entryBuilder) fill(ctx context.Context, rec *Record) error {
	var err error
	// The via link comes first (see provenance.Links) and names the
	// origin, from which the aggregator URI derives (provenance.OriginURI).
	if b.links, err = provenance.AppendLinks(ctx, b.links[:0], &rec.Upstream, b.resolve); err != nil {
		return fmt.Errorf("collection %s: %w", b.coll, err)
	}
	b.buf = append(b.buf[:0], b.s.cfg.BaseURL...)
	if b.buf, err = appendResourcePath(b.buf, b.coll, b.links[0].Href); err != nil {
		return fmt.Errorf("collection %s: resource %s: %w", b.coll, rec.URI, err)
	}
	if b.bareLoc {
		// A list hands its entries only to its Writer, which leaves them
		// as they are, and resource, change and copyFacts set no other
		// fields: clearing these few costs far less, for a million
		// entries, than a new MD and Entry each.
		b.md.Hash, b.md.Length, b.md.Type, b.md.Change, b.md.DateTime = nil, nil, "", "", time.Time{}
		b.e.LastMod, b.e.MD, b.e.Links = rec.At, &b.md, b.links
		return nil
	}
	b.md = resourcesync.MD{}
	b.e = resourcesync.Entry{LastMod: rec.At, MD: &b.md, Links: b.links, Loc: string(b.buf)}
	return nil
}

// write writes the entry just built to wr, with its URI from the
// builder's buffer.
func (b *entryBuilder) write(wr *resourcesync.Writer) error {
	return wr.WriteLoc(b.buf, &b.e)
}

// copyFacts states the aggregator's copy: md5 and sha-256, length, type.
func (b *entryBuilder) copyFacts(rec *Record) {
	hs := b.hashes[:0]
	if rec.MD5 != "" {
		hs = append(hs, resourcesync.Hash{Alg: resourcesync.MD5, Value: rec.MD5})
	}
	if rec.SHA256 != "" {
		hs = append(hs, resourcesync.Hash{Alg: resourcesync.SHA256, Value: rec.SHA256})
	}
	b.md.Hash = hs
	b.length = rec.Length
	b.md.Length = &b.length
	b.md.Type = rec.Type
}

// resolver finds the aggregator's copy of a link target in the same
// collection, for the links provenance rewrites.
func (s *Server) resolver(coll string) provenance.Resolver {
	return func(ctx context.Context, href string) (provenance.Copy, bool, error) {
		rec, err := s.cat.Resource(ctx, coll, href)
		if errors.Is(err, ErrNotFound) {
			return provenance.Copy{}, false, nil
		}
		if err != nil {
			return provenance.Copy{}, false, err
		}
		if rec.Deleted() {
			return provenance.Copy{}, false, nil
		}
		uri, err := s.ResourceURI(coll, provenance.OriginURI(&rec.Upstream))
		if err != nil {
			return provenance.Copy{}, false, nil
		}
		n := rec.Length
		c := provenance.Copy{URI: uri, Length: &n, Type: rec.Type, Modified: rec.At}
		c.Hash = copyHashes(rec)
		return c, true, nil
	}
}

// copyHashes returns the digests of the aggregator's copy.
func copyHashes(rec *Record) resourcesync.Hashes {
	var hs resourcesync.Hashes
	if rec.MD5 != "" {
		hs = append(hs, resourcesync.Hash{Alg: resourcesync.MD5, Value: rec.MD5})
	}
	if rec.SHA256 != "" {
		hs = append(hs, resourcesync.Hash{Alg: resourcesync.SHA256, Value: rec.SHA256})
	}
	return hs
}
