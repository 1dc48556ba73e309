package sim

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// Entry is the entry that records c, written as the Source's Change Lists
// write it (time form, declared hashes, faults on declared values): what a
// change notification pushed for c carries.
func (s *Source) Entry(c Change) (resourcesync.Entry, error) {
	id, err := strconv.Atoi(c.URI[strings.LastIndex(c.URI, "/")+1:])
	if err != nil || id < 1 {
		return resourcesync.Entry{}, fmt.Errorf("simulated Source: entry for %s: not a resource of this Source", c.URI)
	}
	ch := change{time: c.Time.UnixNano(), id: int32(id), size: c.Length}
	switch c.Op {
	case resourcesync.Created:
		ch.op = opCreate
	case resourcesync.Updated:
		ch.op = opUpdate
	case resourcesync.Deleted:
		ch.op = opDelete
	default:
		return resourcesync.Entry{}, fmt.Errorf("simulated Source: entry for %s: unknown change %q", c.URI, c.Op)
	}
	if _, err := hex.Decode(ch.md5[:], []byte(c.MD5)); err != nil && ch.op != opDelete {
		return resourcesync.Entry{}, fmt.Errorf("simulated Source: entry for %s: md5: %w", c.URI, err)
	}
	if _, err := hex.Decode(ch.sha256[:], []byte(c.SHA256)); err != nil && ch.op != opDelete {
		return resourcesync.Entry{}, fmt.Errorf("simulated Source: entry for %s: sha-256: %w", c.URI, err)
	}
	return s.changeEntry(s.BaseURL(), &ch), nil
}
