package sim

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Source is a simulated ResourceSync Source. All its methods are safe for
// concurrent use.
type Source struct {
	cfg Config
	// epoch is when the Source started: the from of its first Change List
	// and the start of its periods.
	epoch time.Time

	mu   sync.RWMutex
	base string
	res  []resource // res[id-1]
	live int
	// log is every change since the epoch, in forward chronological order.
	log  []change
	last int64 // time of the latest change, unix nanoseconds
	rng  *rand.Rand
	buf  []byte
	// gen counts mutations; document ETags derive from it.
	gen uint64

	// hookMu keeps OnChange calls in the order of the changes.
	hookMu   sync.Mutex
	onChange func(Change)
	// hub is the change notification hub, when one is started.
	hub atomic.Pointer[Hub]

	faults faults
	dumps  dumpState

	reqMu    sync.Mutex
	requests map[string]int
	// resRequests counts the requests of bitstream paths by id.
	resRequests []uint32
}

// resource is all the Source keeps of one resource: its bytes follow from
// (seed, id, version).
type resource struct {
	modified int64 // unix nanoseconds
	size     int64
	version  uint32
	deleted  bool
	md5      [md5.Size]byte
	sha256   [sha256.Size]byte
}

// change is one entry of the change log, with the state of the version it
// produced (for a deletion, the state of the version it removed).
type change struct {
	time    int64
	id      int32
	version uint32
	op      op
	size    int64
	md5     [md5.Size]byte
	sha256  [sha256.Size]byte
}

type op uint8

const (
	opCreate op = iota
	opUpdate
	opDelete
)

func (o op) String() string { return [...]string{"created", "updated", "deleted"}[o] }

// Change is one change the Source made, as OnChange and ChangesSince report
// it.
type Change struct {
	// URI is the resource's URI (a path when the base URL is not known).
	URI string
	// Op is "created", "updated" or "deleted".
	Op   string
	Time time.Time
	// Version counts the resource's versions from 1.
	Version int
	// Length, SHA256 and MD5 describe the version the change produced; for
	// a deletion, the version it removed.
	Length int64
	SHA256 string
	MD5    string
}

// Item is the state of one resource, as Snapshot reports it.
type Item struct {
	SHA256  string
	MD5     string
	Length  int64
	Deleted bool
}

// New makes a Source with cfg.Resources resources, all last modified before
// the Source's start, so that its first Change List is empty.
func New(cfg Config) (*Source, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Source{
		cfg:      cfg,
		epoch:    cfg.Now().UTC().Truncate(time.Second),
		base:     strings.TrimSuffix(cfg.BaseURL, "/"),
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		buf:      make([]byte, 32<<10),
		requests: map[string]int{},
	}
	s.res = make([]resource, 0, cfg.Resources)
	s.last = s.epoch.UnixNano()
	for range cfg.Resources {
		// Initial resources were modified in the 30 days before the epoch.
		age := time.Duration(s.rng.Int64N(int64(30 * 24 * time.Hour))).Truncate(time.Second)
		s.res = append(s.res, s.version(len(s.res)+1, 1, s.last-int64(age)))
		s.live++
	}
	return s, nil
}

// version computes the state of version v of resource id, hashing its bytes.
func (s *Source) version(id int, v uint32, modified int64) resource {
	vs := versionSeed(s.cfg.Seed, id, v)
	r := resource{modified: modified, version: v, size: versionSize(vs, s.cfg.MinSize, s.cfg.MaxSize)}
	r.md5, r.sha256 = digests(vs, r.size, s.buf)
	return r
}

// SetBaseURL fixes the scheme and authority used in every loc, for a Source
// served by a server whose address is known only once it listens.
func (s *Source) SetBaseURL(base string) error {
	if err := checkBase(base); err != nil {
		return err
	}
	s.mu.Lock()
	s.base = strings.TrimSuffix(base, "/")
	s.gen++
	s.mu.Unlock()
	return nil
}

// BaseURL is the base URL in use, or "" before one is known.
func (s *Source) BaseURL() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.base
}

// Epoch is when the Source started: the from of its first Change List.
func (s *Source) Epoch() time.Time { return s.epoch }

// OnChange sets a function called after every change, in the order of the
// changes, outside the Source's lock; a WebSub hub uses it to push.
func (s *Source) OnChange(f func(Change)) {
	s.hookMu.Lock()
	s.onChange = f
	s.hookMu.Unlock()
}

// Snapshot returns every resource the Source has had, by URI, deleted ones
// included with Deleted set: what a Destination's copy should match.
func (s *Source) Snapshot() map[string]Item {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := make(map[string]Item, len(s.res))
	for i := range s.res {
		r := &s.res[i]
		m[s.uri(s.base, i+1)] = Item{
			SHA256:  hex.EncodeToString(r.sha256[:]),
			MD5:     hex.EncodeToString(r.md5[:]),
			Length:  r.size,
			Deleted: r.deleted,
		}
	}
	return m
}

// Len reports how many resources exist now, deleted ones excluded.
func (s *Source) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.live
}

// uri is the URI of resource id under base.
func (s *Source) uri(base string, id int) string {
	return base + resPath(id)
}

func resPath(id int) string { return "/res/" + strconv.Itoa(id) }

// publicChange converts a log entry for callers.
func (s *Source) publicChange(c *change) Change {
	return Change{
		URI:     s.uri(s.base, int(c.id)),
		Op:      c.op.String(),
		Time:    time.Unix(0, c.time).UTC(),
		Version: int(c.version),
		Length:  c.size,
		SHA256:  hex.EncodeToString(c.sha256[:]),
		MD5:     hex.EncodeToString(c.md5[:]),
	}
}
