package sim

import (
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Locs outside what a harvester may fetch, for Fault.ExtraLoc.
const (
	// ForeignLoc is outside the Source's URI authority.
	ForeignLoc = "http://elsewhere.example/res/1"
	// PrivateLoc is on a private address.
	PrivateLoc = "http://10.0.0.1/x"
)

// Fault is a way for the Source to misbehave on requests for the paths it is
// set on. Several fields may be set at once.
type Fault struct {
	// Status, when non-zero, is sent instead of the response, with an empty
	// body.
	Status int
	// RetryAfter adds a Retry-After header (in whole seconds) to Status.
	RetryAfter time.Duration
	// Delay holds the response back before its headers are sent.
	Delay time.Duration
	// Hold, when set, holds the response back before its headers until it
	// is closed, so that a test decides when a request in flight ends
	// (the request counts in Requests as soon as it arrives).
	Hold <-chan struct{} `yaml:"-"`
	// Trickle pauses between 1 KiB chunks of the body.
	Trickle time.Duration
	// Truncate sends a bitstream's full Content-Length but only half its
	// bytes, then closes the connection.
	Truncate bool

	// WrongHash declares a hash that does not match the bitstream in every
	// list entry of a resource whose path matches.
	WrongHash bool
	// WrongLength declares one byte more than the bitstream has.
	WrongLength bool

	// NonChronological writes a Change List's entries newest first.
	NonChronological bool
	// ExtraLoc adds an entry with this loc to a Resource or Change List
	// (see ForeignLoc and PrivateLoc).
	ExtraLoc string

	// Times is how many requests the fault applies to before it clears
	// itself; 0 means until it is cleared.
	Times int
	// After is how many matching requests are served as if the fault
	// were not set before it applies, so that a test can let exactly
	// that many through (Times counts from there).
	After int
}

// faults is the set of faults in force, by path pattern (path.Match syntax),
// first set first matched.
type faults struct {
	mu   sync.Mutex
	list []*setFault
	// entry counts faults that change list entries, so that writing a list
	// looks them up only when there are some.
	entry atomic.Int32
	// gen changes whenever the set changes, for document ETags.
	gen atomic.Uint64
}

type setFault struct {
	pattern string
	f       Fault
	used    int
}

func (f Fault) onEntry() bool { return f.WrongHash || f.WrongLength }

// SetFault makes requests whose path matches pattern (path.Match syntax,
// for example "/res/7", "/res/*" or "/changelist-*.xml") misbehave as f
// says, replacing a fault set before on the same pattern.
func (s *Source) SetFault(pattern string, f Fault) error {
	if _, err := path.Match(pattern, "/"); err != nil {
		return err
	}
	fs := &s.faults
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.remove(pattern)
	fs.list = append(fs.list, &setFault{pattern: pattern, f: f})
	if f.onEntry() {
		fs.entry.Add(1)
	}
	fs.gen.Add(1)
	return nil
}

// ClearFault removes the fault set on pattern.
func (s *Source) ClearFault(pattern string) {
	fs := &s.faults
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.remove(pattern)
	fs.gen.Add(1)
}

// ClearFaults removes every fault.
func (s *Source) ClearFaults() {
	fs := &s.faults
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.list = nil
	fs.entry.Store(0)
	fs.gen.Add(1)
}

// remove drops the fault on pattern; it runs under fs.mu.
func (fs *faults) remove(pattern string) {
	for i, sf := range fs.list {
		if sf.pattern == pattern {
			if sf.f.onEntry() {
				fs.entry.Add(-1)
			}
			fs.list = append(fs.list[:i], fs.list[i+1:]...)
			return
		}
	}
}

// forRequest returns the fault a request for p meets, counting it against
// Times.
func (fs *faults) forRequest(p string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, sf := range fs.list {
		if ok, _ := path.Match(sf.pattern, p); !ok {
			continue
		}
		f := sf.f
		sf.used++
		if sf.used <= f.After {
			continue // as if it were not set: a later fault may match
		}
		if f.Times > 0 && sf.used-f.After >= f.Times {
			fs.remove(sf.pattern)
			fs.gen.Add(1)
		}
		return f, true
	}
	return Fault{}, false
}

// forEntry returns the fault declared on the list entries of resource path
// p, without counting it.
func (fs *faults) forEntry(p string) Fault {
	if fs.entry.Load() == 0 {
		return Fault{}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, sf := range fs.list {
		if ok, _ := path.Match(sf.pattern, p); ok && sf.f.onEntry() {
			return sf.f
		}
	}
	return Fault{}
}

// Requests returns how many requests each path has received.
func (s *Source) Requests() map[string]int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	m := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		m[k] = v
	}
	for id, n := range s.resRequests {
		if n > 0 {
			m[resPathPrefix+strconv.Itoa(id)] = int(n)
		}
	}
	return m
}

// ResetRequests sets every request count back to zero.
func (s *Source) ResetRequests() {
	s.reqMu.Lock()
	s.requests = map[string]int{}
	s.resRequests = nil
	s.reqMu.Unlock()
}

// countRequest counts a request for p. A bitstream's count is kept by its
// id rather than under its path: a Source of millions of resources would
// otherwise hold a map entry, path and all, for each one fetched.
func (s *Source) countRequest(p string) {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	if id, ok := resourceID(p); ok {
		if id >= len(s.resRequests) {
			s.resRequests = append(s.resRequests, make([]uint32, id+1-len(s.resRequests))...)
		}
		s.resRequests[id]++
		return
	}
	s.requests[p]++
}

// resPathPrefix starts the path of every bitstream: /res/<id>.
const resPathPrefix = "/res/"

// resourceID is the id in a bitstream path written as the Source writes
// it (no sign, no leading zeros), within the ids a count is kept for.
func resourceID(p string) (int, bool) {
	text, ok := strings.CutPrefix(p, resPathPrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(text)
	if err != nil || id < 1 || id > maxCountedID || strconv.Itoa(id) != text {
		return 0, false
	}
	return id, true
}

// maxCountedID bounds the ids counted by id, so that a request for a
// huge id cannot make the count slice huge; others count by path.
const maxCountedID = 1 << 26
