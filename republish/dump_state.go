package republish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
)

// StateStore keeps small values durably; the catalog's KV table is one.
// Value returns an error wrapping ErrNotFound for a key never set.
type StateStore interface {
	Value(ctx context.Context, key string) ([]byte, error)
	SetValue(ctx context.Context, key string, value []byte) error
}

// SQLiteState is the StateStore of a SQLite catalog's KV table.
type SQLiteState struct{ cat *catalog.Catalog }

var _ StateStore = (*SQLiteState)(nil)

// StateFromSQLite returns the StateStore NewDumps needs, reading and
// writing cat's KV table.
func StateFromSQLite(cat *catalog.Catalog) *SQLiteState { return &SQLiteState{cat: cat} }

// Value reads key, mapping the catalog's not-found to ErrNotFound.
func (s *SQLiteState) Value(ctx context.Context, key string) ([]byte, error) {
	v, err := s.cat.Value(ctx, key)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return v, err
}

// SetValue writes key.
func (s *SQLiteState) SetValue(ctx context.Context, key string, value []byte) error {
	return s.cat.SetValue(ctx, key, value)
}

// dumpPackage describes one stored package and its manifest copy: what
// the Resource Dump or Change Dump says of it, and the blob keys to serve
// it from. Keys are the sha-256 of the bytes, so the description pins the
// exact bytes served.
type dumpPackage struct {
	Key            string    `json:"key"`
	Length         int64     `json:"length"`
	MD5            string    `json:"md5"`
	Manifest       string    `json:"manifest"`
	ManifestLength int64     `json:"manifest_length"`
	Entries        int       `json:"entries"`
	Bytes          int64     `json:"bytes"`
	At             time.Time `json:"at,omitzero"`
	Completed      time.Time `json:"completed,omitzero"`
	From           time.Time `json:"from,omitzero"`
	Until          time.Time `json:"until,omitzero"`
}

// resourceDump is one collection's current Resource Dump: one snapshot of
// the catalog, cut into packages.
type resourceDump struct {
	At        time.Time     `json:"at"`
	Completed time.Time     `json:"completed"`
	Packages  []dumpPackage `json:"packages"`
}

// dumpState is everything the republisher keeps about one collection's
// Dumps, written whole after every build so that a restarted node serves
// the same Dumps.
type dumpState struct {
	Resource *resourceDump `json:"resource,omitempty"`
	// Retired are the packages of the previous Resource Dump: no longer
	// listed, still served, so that a Destination that read the previous
	// Resource Dump just before a rebuild can finish its downloads.
	Retired []dumpPackage `json:"retired,omitempty"`
	// Changes are the Change Dump's packages, oldest first; consecutive
	// packages cover consecutive intervals.
	Changes []dumpPackage `json:"changes,omitempty"`
	// Next is where the next Change Dump package starts: the until of the
	// last one, or the first period packaged; zero before the first build.
	Next time.Time `json:"next,omitzero"`
	// Superseded are the ZIP keys of packages no longer served (dropped
	// from Retired or from the oldest Changes), which garbage collection
	// deletes and then has forgotten (see Dumps.Superseded).
	Superseded []string `json:"superseded,omitempty"`
}

func dumpStateKey(coll string) string { return "republish/dumps/" + coll }

// loadDumpState reads a collection's state; a collection never built has
// the zero state.
func loadDumpState(ctx context.Context, st StateStore, coll string) (*dumpState, error) {
	b, err := st.Value(ctx, dumpStateKey(coll))
	if errors.Is(err, ErrNotFound) {
		return &dumpState{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("collection %s: reading dump state: %w", coll, err)
	}
	var ds dumpState
	if err := json.Unmarshal(b, &ds); err != nil {
		return nil, fmt.Errorf("collection %s: dump state %s: %w", coll, dumpStateKey(coll), err)
	}
	return &ds, nil
}

func saveDumpState(ctx context.Context, st StateStore, coll string, ds *dumpState) error {
	b, err := json.Marshal(ds)
	if err != nil {
		return fmt.Errorf("collection %s: encoding dump state: %w", coll, err)
	}
	if err := st.SetValue(ctx, dumpStateKey(coll), b); err != nil {
		return fmt.Errorf("collection %s: writing dump state: %w", coll, err)
	}
	return nil
}

// find returns the package, listed or retired, whose ZIP or manifest copy
// has blob key key, and whether key names the manifest.
func (ds *dumpState) find(key string) (p *dumpPackage, manifest bool) {
	lists := [][]dumpPackage{ds.Changes, ds.Retired}
	if ds.Resource != nil {
		lists = append(lists, ds.Resource.Packages)
	}
	for _, l := range lists {
		for i := range l {
			switch key {
			case l[i].Key:
				return &l[i], false
			case l[i].Manifest:
				return &l[i], true
			}
		}
	}
	return nil, false
}
