package fetch

import (
	"log/slog"
	"net/url"
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
// its host has a free slot, before pulling anything new. The lot is
// bounded, in total and per host, so that one slow host cannot fill the
// consumer's pending window with its own changes.
type lot struct {
	max, perHost int
	every        time.Duration
	log          *slog.Logger

	mu    sync.Mutex
	hosts map[string][]*parked
	ring  []string // hosts with parked changes, taken from in turn
	next  int
	n     int
}

type parked struct {
	msg    *queue.ChangeMsg
	client *upstream.Client
	hb     *heartbeat
}

func newLot(size int, every time.Duration, log *slog.Logger) *lot {
	return &lot{max: size, perHost: max(1, size/4), every: every, log: log, hosts: map[string][]*parked{}}
}

// hostKey is the authority a change is fetched from first.
func hostKey(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	return u.Scheme + "://" + u.Host
}

// park keeps msg aside; false when the lot, or its host's share of it, is
// full.
func (l *lot) park(msg *queue.ChangeMsg, client *upstream.Client) bool {
	key := hostKey(msg.Change.URI)
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.hosts[key]
	if l.n >= l.max || len(q) >= l.perHost {
		return false
	}
	if len(q) == 0 {
		l.ring = append(l.ring, key)
	}
	l.hosts[key] = append(q, &parked{msg: msg, client: client, hb: startHeartbeat(msg, l.every, l.log)})
	l.n++
	return true
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
		q := l.hosts[key]
		if q[0].client.Saturated(q[0].msg.Change.URI) {
			l.next++
			continue
		}
		p := q[0]
		q[0] = nil
		if q = q[1:]; len(q) == 0 {
			delete(l.hosts, key)
			l.ring = append(l.ring[:l.next], l.ring[l.next+1:]...)
		} else {
			l.hosts[key] = q
			l.next++
		}
		l.n--
		p.hb.stop()
		return p.msg
	}
	return nil
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
	for _, q := range l.hosts {
		for _, p := range q {
			p.hb.stop()
			if err := p.msg.Nak(0); err != nil {
				l.log.Warn("could not hand back a parked change", "source", p.msg.Change.Source, "uri", p.msg.Change.URI, "err", err)
			}
		}
	}
	l.hosts, l.ring, l.n = map[string][]*parked{}, nil, 0
}
