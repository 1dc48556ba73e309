package provenance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Copy is what the aggregator holds of a link's target: its own URI for the
// target and the facts of its copy.
type Copy struct {
	URI    string
	Hash   resourcesync.Hashes
	Length *int64
	Type   string
	// Modified is the aggregator's change time of the copy.
	Modified time.Time
}

// Resolver finds the aggregator's copy of a link target, given the href as
// the upstream wrote it. ok is false when the aggregator does not hold it.
type Resolver func(ctx context.Context, href string) (c Copy, ok bool, err error)

// Via returns the single via link a republished entry carries: the upstream
// entry's own via link when it has one (the upstream is an aggregator and
// that link already names the origin), else a link to the upstream URI with
// the lastmod, hash, length and type the origin stated.
func Via(up *viaduct.Change) resourcesync.Link {
	for _, l := range up.Links {
		if strings.EqualFold(l.Rel, "via") {
			return l
		}
	}
	return resourcesync.Link{
		Rel:      "via",
		Href:     up.URI,
		Modified: up.Modified,
		Hash:     up.Hash,
		Length:   up.Length,
		Type:     up.Type,
	}
}

// Links returns the links of the republished entry for the upstream change
// up: exactly one via link first, then the inherited links the policy keeps
// or rewrites, in the upstream's order. resolve may be nil, in which case
// every link to be rewritten is dropped.
func Links(ctx context.Context, up *viaduct.Change, resolve Resolver) ([]resourcesync.Link, error) {
	return AppendLinks(ctx, make([]resourcesync.Link, 0, 1+len(up.Links)), up, resolve)
}

// AppendLinks is Links appending to dst, so that a caller writing a list of
// a million entries can reuse one slice.
func AppendLinks(ctx context.Context, dst []resourcesync.Link, up *viaduct.Change, resolve Resolver) ([]resourcesync.Link, error) {
	out := append(dst, Via(up))
	for _, l := range up.Links {
		act := ActionFor(l.Rel)
		switch {
		case act == Keep && strings.EqualFold(l.Rel, "via"):
			// already placed first, the only via
		case act == Keep:
			out = append(out, kept(l))
		case act == Rewrite || act == RewriteOrKeep:
			var c Copy
			ok := false
			if resolve != nil {
				var err error
				if c, ok, err = resolve(ctx, l.Href); err != nil {
					return nil, fmt.Errorf("resolving %s link %s of %s: %w", l.Rel, l.Href, up.URI, err)
				}
			}
			switch {
			case ok:
				out = append(out, rewrite(l, c))
			case act == RewriteOrKeep:
				out = append(out, kept(l))
			}
		}
	}
	return out, nil
}

// kept is an inherited link passed on as the upstream wrote it, its target
// untouched, with the attributes a Destination uses (rel, href, modified,
// length, type, pri, and the md5, sha-1 and sha-256 of the target) and no
// others: the catalog bounds a republished entry's size by those
// (catalog.SizeHint), and a link's extension attributes are the
// upstream's vocabulary, not the aggregator's.
func kept(l resourcesync.Link) resourcesync.Link {
	out := resourcesync.Link{Rel: l.Rel, Href: l.Href, Modified: l.Modified, Length: l.Length, Type: l.Type, Pri: l.Pri}
	for _, h := range l.Hash {
		switch h.Alg {
		case resourcesync.MD5, resourcesync.SHA1, resourcesync.SHA256:
			out.Hash = append(out.Hash, h)
		}
	}
	return out
}

// rewrite points l at the aggregator's copy. The attributes that described
// the upstream's target (hash, length, modified) are replaced by those of
// the copy, which is what a Destination following the link will get; rel,
// pri and the rest are kept.
func rewrite(l resourcesync.Link, c Copy) resourcesync.Link {
	l.Href = c.URI
	l.Hash = c.Hash
	l.Length = c.Length
	l.Modified = c.Modified
	if c.Type != "" {
		l.Type = c.Type
	}
	return l
}
