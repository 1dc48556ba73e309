package republish

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// collSet is the collections a Server serves, with the identity of the
// configuration they make: replaced whole when a reload adds collections,
// never changed in place, so a request reads one consistent set.
type collSet struct {
	list   []Collection
	byName map[string]*Collection
	confID string
}

// collsNow holds the set served now; mu orders additions and guards
// onAdd, what is told of each collection added (see AddCollections).
type collsNow struct {
	mu    sync.Mutex
	cur   atomic.Pointer[collSet]
	onAdd []func(ctx context.Context, name string) error
}

// whenAdded has add called for each collection AddCollections adds, before
// the collection is served.
func (s *Server) whenAdded(add func(ctx context.Context, name string) error) {
	s.colls.mu.Lock()
	defer s.colls.mu.Unlock()
	s.colls.onAdd = append(s.colls.onAdd, add)
}

func newCollSet(cfg Config, list []Collection) *collSet {
	set := &collSet{list: list, byName: make(map[string]*Collection, len(list))}
	for i := range set.list {
		set.byName[set.list[i].Name] = &set.list[i]
	}
	cfg.Collections = list
	set.confID = configID(cfg)
	return set
}

// collections is the collections served now.
func (s *Server) collections() []Collection { return s.colls.cur.Load().list }

// collection is the collection called name; nil if none is.
func (s *Server) collection(name string) *Collection { return s.colls.cur.Load().byName[name] }

// confID identifies the configuration's effect on documents now.
func (s *Server) confID() string { return s.colls.cur.Load().confID }

// Collections is the names of the collections served now, in their order.
func (s *Server) Collections() []string {
	var out []string
	for _, c := range s.collections() {
		out = append(out, c.Name)
	}
	return out
}

// AddCollections starts serving cols beside the collections served
// already, as a reload that adds Sources asks: their Capability Lists,
// their entries in the Source Description and their topics exist from
// now on, and their Dumps are built at the next turn of the schedule. A
// collection already served is left as it is. Nothing is added when any
// of cols is invalid.
func (s *Server) AddCollections(ctx context.Context, cols ...Collection) ([]string, error) {
	s.colls.mu.Lock()
	defer s.colls.mu.Unlock()
	cur := s.colls.cur.Load()
	list := slices.Clone(cur.list)
	var added []string
	for _, c := range cols {
		if cur.byName[c.Name] != nil || slices.Contains(added, c.Name) {
			continue
		}
		if err := checkCollectionName(c.Name); err != nil {
			return nil, fmt.Errorf("republish: adding collection: %w", err)
		}
		list = append(list, c)
		added = append(added, c.Name)
	}
	if len(added) == 0 {
		return nil, nil
	}
	if s.dumps != nil {
		if err := s.dumps.add(ctx, added); err != nil {
			return nil, err
		}
	}
	for _, add := range s.colls.onAdd {
		for _, name := range added {
			if err := add(ctx, name); err != nil {
				return nil, fmt.Errorf("republish: adding collection %s: %w", name, err)
			}
		}
	}
	s.colls.cur.Store(newCollSet(s.cfg, list))
	return added, nil
}
