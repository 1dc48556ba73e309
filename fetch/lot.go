package fetch

import (
	"log/slog"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// lot holds changes whose host had every slot taken when a worker tried
// it, so that the worker turns to other Sources' changes instead of waiting
// on that host: a slow Source slows only itself. A parked change keeps its
// delivery (a heartbeat keeps it from being handed to another worker) and
// costs none of the queue's deliveries; a worker takes it again as soon as
// its host has a free slot, before pulling anything new.
//
// The lot is bounded in messages of CHANGES, in total and per host, since
// what it must not fill is the consumer's pending window, which counts
// messages: a baseline's group of up to queue.GroupMax changes takes one
// place however many of its members wait, so that a saturated host's
// whole share of the backlog can wait here while the workers serve the
// Sources queued behind it. Each message held has one heartbeat, however
// many of its members are parked.
type lot struct {
	max, perHost int
	every        time.Duration
	log          *slog.Logger

	mu    sync.Mutex
	hosts map[string]*hostLot
	ring  []string // hosts with parked changes, taken from in turn
	next  int
	held  map[uint64]*heldMsg // by stream sequence
	n     int                 // changes parked

	// watched: a worker waiting for a new change is the lot's watcher,
	// back when the first parked host's rate allows a request (see watch).
	watched bool
}

// hostLot is what waits for one host: its changes in the order they were
// parked, and how many of them each message holds. auth is the host as
// the upstream client counts its slots, read once when its first change
// is parked (ok false: the URI has none, and is never saturated).
type hostLot struct {
	q    []*parked
	msgs map[uint64]int
	auth upstream.Authority
	ok   bool
}

// heldMsg is a message of CHANGES the lot holds members of.
type heldMsg struct {
	n  int
	hb *heartbeat
}

type parked struct {
	msg    *queue.ChangeMsg
	client *upstream.Client
}

func newLot(size int, every time.Duration, log *slog.Logger) *lot {
	return &lot{max: size, perHost: max(1, size/4), every: every, log: log,
		hosts: map[string]*hostLot{}, held: map[uint64]*heldMsg{}}
}

// hostKey is the authority a change is fetched from first; a URI that
// has none is a host of its own.
func hostKey(uri string) (string, upstream.Authority, bool) {
	a, err := upstream.ParseAuthority(uri)
	if err != nil {
		return uri, "", false
	}
	return string(a), a, true
}

// park keeps msg aside; false when it would take the lot, or its host's
// share of it, past its bound in messages.
func (l *lot) park(msg *queue.ChangeMsg, client *upstream.Client) bool {
	key, auth, ok := hostKey(msg.Change.URI)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hosts[key]
	hm := l.held[msg.Seq]
	if hm == nil && len(l.held) >= l.max {
		return false
	}
	if h != nil && h.msgs[msg.Seq] == 0 && len(h.msgs) >= l.perHost {
		return false
	}
	if h == nil {
		h = &hostLot{msgs: map[uint64]int{}, auth: auth, ok: ok}
		l.hosts[key] = h
		l.ring = append(l.ring, key)
	}
	if hm == nil {
		hm = &heldMsg{hb: startHeartbeat(msg, l.every, l.log)}
		l.held[msg.Seq] = hm
	}
	hm.n++
	h.msgs[msg.Seq]++
	h.q = append(h.q, &parked{msg: msg, client: client})
	l.n++
	return true
}

// unhold counts one change of seq out of the lot, and stops the message's
// heartbeat with its last one.
func (l *lot) unhold(seq uint64) {
	hm := l.held[seq]
	if hm.n--; hm.n == 0 {
		hm.hb.stop()
		delete(l.held, seq)
	}
}

// take returns a parked change whose host has a free slot now, the hosts
// taken in turn; nil when there is none.
func (l *lot) take() *queue.ChangeMsg {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range len(l.ring) {
		if l.next >= len(l.ring) {
			l.next = 0
		}
		key := l.ring[l.next]
		h := l.hosts[key]
		if h.ok && h.q[0].client.Saturated(h.auth) {
			l.next++
			continue
		}
		p := h.q[0]
		h.q[0] = nil
		if h.q = h.q[1:]; len(h.q) == 0 {
			delete(l.hosts, key)
			l.ring = append(l.ring[:l.next], l.ring[l.next+1:]...)
		} else {
			if h.msgs[p.msg.Seq]--; h.msgs[p.msg.Seq] == 0 {
				delete(h.msgs, p.msg.Seq)
			}
			l.next++
		}
		l.n--
		l.unhold(p.msg.Seq)
		return p.msg
	}
	return nil
}

// minLotWatch bounds how often the watcher looks at the lot.
const minLotWatch = 5 * time.Millisecond

// watch makes the caller the lot's watcher when changes are parked and
// nobody watches: ok says it does (it calls unwatch when it is back), and
// wait is how long it stays away, until the first parked host's rate
// allows a request (at least minLotWatch, at most poll). The other
// waiting workers come back every poll. A host whose slots are all taken
// is not waited for: the worker whose request ends gives the slot back
// and looks at the lot first; when every parked host's slots are taken
// there is nothing to watch for, and nobody watches. Without a watcher, a
// lot of rate-bound hosts was looked at only as often as poll allowed
// each waiting worker: three workers fetched six hosts allowing 16
// requests a second each at a fifth of that
// (BenchmarkFewWorkersManyPoliteHosts).
func (l *lot) watch(poll time.Duration) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watched || l.n == 0 {
		return 0, false
	}
	d, rated := poll, false
	for _, key := range l.ring {
		h := l.hosts[key]
		if !h.ok {
			d, rated = 0, true
			break
		}
		if w, taken := h.q[0].client.RateWait(h.auth); !taken {
			d, rated = min(d, w), true
		}
	}
	if !rated {
		return 0, false
	}
	l.watched = true
	return max(d, minLotWatch), true
}

// unwatch ends the caller's watch.
func (l *lot) unwatch() {
	l.mu.Lock()
	l.watched = false
	l.mu.Unlock()
}

// len is how many changes are parked.
func (l *lot) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// release hands every parked change back to the queue for immediate
// redelivery: the workers are stopping.
func (l *lot) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, hm := range l.held {
		hm.hb.stop()
	}
	for _, h := range l.hosts {
		for _, p := range h.q {
			if err := p.msg.Nak(0); err != nil {
				l.log.Warn("could not hand back a parked change", "source", p.msg.Change.Source, "uri", p.msg.Change.URI, "err", err)
			}
		}
	}
	l.hosts, l.ring, l.held, l.n = map[string]*hostLot{}, nil, map[uint64]*heldMsg{}, 0
}
