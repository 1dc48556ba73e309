package catalog

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Upstream is what the Source last said about a resource: its times,
// hashes, length, type and rs:ln links, kept for provenance and for the
// harvester's comparison with the Source's lists.
type Upstream struct {
	// Time is the Source's time of its last change (datetime or lastmod).
	Time     time.Time
	Modified time.Time
	Hash     resourcesync.Hashes
	// Length is nil when the Source did not state one.
	Length *int64
	Type   string
	Links  []resourcesync.Link
}

// maxDigest is the longest digest a row may keep: the fetch workers
// compute the copy's digests, 64 and 32 hex digits, so a longer one is a
// fault of the event, and a packed string's length stays one byte.
const maxDigest = 127

// validate refuses events the catalog cannot record faithfully.
func validate(ev *viaduct.Event) error {
	switch {
	case ev == nil:
		return fmt.Errorf("%w: no event", ErrInvalid)
	case ev.Collection == "":
		return fmt.Errorf("%w: no collection", ErrInvalid)
	case ev.URI == "":
		return fmt.Errorf("%w: no uri", ErrInvalid)
	case ev.Source == "":
		return fmt.Errorf("%w: no source", ErrInvalid)
	case len(ev.SHA256) > maxDigest || len(ev.MD5) > maxDigest:
		return fmt.Errorf("%w: a digest of %d or %d bytes, over %d", ErrInvalid, len(ev.SHA256), len(ev.MD5), maxDigest)
	}
	switch ev.Op {
	case resourcesync.Created, resourcesync.Updated:
		if ev.SHA256 == "" {
			return fmt.Errorf("%w: %s without sha256", ErrInvalid, ev.Op)
		}
		if ev.Length < 0 {
			return fmt.Errorf("%w: negative length %d", ErrInvalid, ev.Length)
		}
	case resourcesync.Deleted:
	default:
		return fmt.Errorf("%w: unknown op %q", ErrInvalid, ev.Op)
	}
	return nil
}

// upstreamOf renders the event's source and upstream metadata as
// up_pack keeps them, and its chain of hops as the hops column keeps it:
// "" (NULL) when the chain is what hopsOf derives from the row, which it
// is whenever the upstream's URI is the event's.
func upstreamOf(ev *viaduct.Event) (upFacts, string, error) {
	up := &ev.Upstream
	chain := upstreamHops(ev)
	u := newUpFacts(ev.Source, chain[0].URI, ev.URI, &Upstream{Time: up.Time, Modified: up.Modified, Hash: up.Hash,
		Length: up.Length, Type: up.Type, Links: up.Links})
	if up.URI == ev.URI {
		return u, "", nil
	}
	hops, err := json.Marshal(chain)
	if err != nil {
		return upFacts{}, "", fmt.Errorf("encode provenance: %w", err)
	}
	return u, string(hops), nil
}

// newUpFacts is what up_pack keeps of up, the Source's word of the
// resource at uri that it harvested from source and whose origin is
// origin, in the forms the applier writes (links packed against uri).
func newUpFacts(source, origin, uri string, up *Upstream) upFacts {
	u := upFacts{source: source, origin: origin, time: up.Time, modified: up.Modified, hash: up.Hash.String(), typ: up.Type}
	if up.Length != nil {
		u.length = sql.NullInt64{Int64: *up.Length, Valid: true}
	}
	if len(up.Links) > 0 {
		// The links are told against the hash as the pack gives it back.
		u.links = packLinks(up.Links, &linkBase{uri: uri, modified: up.Modified,
			hash: appendHashes(nil, u.hash), length: up.Length, typ: up.Type})
	}
	return u
}

// formatTime writes an upstream time exactly, or "" for none.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// parseTime reads what formatTime wrote.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}
