package public

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Listener is the public listener: it bounds the connections open in
// total and per client address, and gives every write a deadline. It never
// stops accepting: past max, a new connection takes the place of the
// longest silent one (accepted or kept alive, no request in flight, and
// nothing of a request sent: no byte read by the server since it became
// idle and none waiting in the socket), so idle connections, however many
// and however new, cannot lock out a Destination with a request to make,
// and the process stays under its open-file limit. Whether bytes wait is
// asked of the kernel (pending), not guessed from an age: a connection
// whose request has arrived but is not read yet is never taken, one that
// has said nothing is taken oldest first. A connection refused (no silent
// one to replace, or its client at its bound) is answered 503 with
// Retry-After before it is closed, as a request refused for max_expensive
// is.
type Listener struct {
	net.Listener
	max, perClient int
	writeTimeout   time.Duration
	retryAfter     time.Duration
	m              *limits
	log            *slog.Logger

	mu       sync.Mutex
	conns    map[*limitedConn]struct{}
	byClient map[string]int
	// lingering counts the refused connections being answered; past
	// maxLingering a refused one is closed at once.
	lingering atomic.Int32
}

const (
	// maxLingering bounds the refused connections answered at once, so
	// that a flood of them holds a bounded number of files.
	maxLingering = 64
	// lingerFor bounds the time a refused connection is held to deliver
	// its answer.
	lingerFor = time.Second
)

// limitedConn is one accepted connection; idle, since and dropped are
// guarded by the limiter's mu. heard is set by the server's reads (without
// the lock: it is on the path of every request) and cleared when the
// connection becomes idle, so a request the server has begun to read, but
// not yet reported active, is not taken for silence.
type limitedConn struct {
	net.Conn
	l       *Listener
	client  string
	idle    bool
	since   time.Time
	dropped bool
	heard   atomic.Bool
}

func (l *Listener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.admit(conn); c != nil {
			return c, nil
		}
	}
}

// admit counts conn in, making room if needed; nil when it was refused
// and closed.
func (l *Listener) admit(conn net.Conn) *limitedConn {
	client, _, err := net.SplitHostPort(conn.RemoteAddr().String())
	if err != nil {
		client = conn.RemoteAddr().String()
	}
	l.mu.Lock()
	if l.byClient[client] >= l.perClient {
		l.mu.Unlock()
		l.refuse(conn, "per_client")
		return nil
	}
	var victim *limitedConn
	if len(l.conns) >= l.max {
		if victim = l.oldestSilent(); victim == nil {
			l.mu.Unlock()
			l.refuse(conn, "full")
			return nil
		}
		l.dropLocked(victim)
	}
	c := &limitedConn{Conn: conn, l: l, client: client, idle: true, since: time.Now()}
	l.conns[c] = struct{}{}
	l.byClient[client]++
	l.mu.Unlock()
	if victim != nil {
		l.m.evicted.Inc()
		victim.Conn.Close()
	}
	return c
}

// refuse answers conn 503, asking it to come back after retryAfter, and
// closes it. The answer goes to a request, not to a connection: it is
// written once the request's head has arrived, since a client that has
// just connected and not yet sent its request takes a response that comes
// first for one it never asked for (Go's client drops it as unsolicited
// and reports a broken connection), which is the bare close the 503 is
// there to avoid. A client that sends no head within lingerFor is closed
// unanswered. After the answer the sending side is shut and what else the
// client sent is read away, still within lingerFor, so that unread bytes
// do not turn the close into a reset that loses the answer.
func (l *Listener) refuse(conn net.Conn, reason string) {
	l.m.refused.WithLabelValues(reason).Inc()
	if l.lingering.Add(1) > maxLingering {
		l.lingering.Add(-1)
		conn.Close()
		return
	}
	go func() {
		defer l.lingering.Add(-1)
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(lingerFor))
		lr := &io.LimitedReader{R: conn, N: maxRefusedHead}
		r := bufio.NewReader(lr)
		// What the head holds does not matter, only that it came: one
		// that is not HTTP, or too long, is answered all the same. A
		// client that sent nothing is closed; one that stopped halfway
		// has its deadline passed, and the answer fails to go.
		http.ReadRequest(r)
		if lr.N == maxRefusedHead {
			return
		}
		if _, err := fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: %s\r\n"+
			"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
			retryAfterValue(l.retryAfter), len(refusedBody), refusedBody); err != nil {
			return
		}
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		lr.N = 64 << 10
		io.Copy(io.Discard, r)
	}()
}

// maxRefusedHead bounds what is read of a refused request's head.
const maxRefusedHead = 16 << 10

const refusedBody = "too many connections; retry later\n"

// oldestSilent is the connection idle the longest that has sent nothing
// of a request; nil if none has. A connection found with bytes waiting is
// passed over and the next oldest asked, so the cost is one scan per
// request waiting unread, which the server is about to take anyway. mu
// held.
func (l *Listener) oldestSilent() *limitedConn {
	passed := map[*limitedConn]bool{}
	for {
		var best *limitedConn
		for c := range l.conns {
			if c.idle && !passed[c] && !c.heard.Load() && (best == nil || c.since.Before(best.since)) {
				best = c
			}
		}
		if best == nil || !pending(best.Conn) {
			return best
		}
		passed[best] = true
	}
}

// dropLocked forgets c; mu held.
func (l *Listener) dropLocked(c *limitedConn) {
	if c.dropped {
		return
	}
	c.dropped = true
	delete(l.conns, c)
	if l.byClient[c.client]--; l.byClient[c.client] <= 0 {
		delete(l.byClient, c.client)
	}
}

// state follows the server's view of each connection (http.Server.ConnState).
func (l *Listener) state(conn net.Conn, s http.ConnState) {
	c, ok := conn.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		c.idle, c.since = true, time.Now()
		c.heard.Store(false)
	case http.StateActive:
		c.idle = false
	case http.StateHijacked, http.StateClosed:
		l.dropLocked(c)
	}
}

// Open is how many connections are counted in.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Read marks the connection heard once the server has read any of it.
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.heard.Store(true)
	}
	return n, err
}

// Write gives each write writeTimeout: a client that reads slowly but
// reads gets any response whole, one that stops reading is cut off.
func (c *limitedConn) Write(p []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.l.writeTimeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *limitedConn) Close() error {
	c.l.mu.Lock()
	c.l.dropLocked(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
