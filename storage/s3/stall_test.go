package s3

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/storage"
)

// stallingProxy forwards TCP connections to MinIO until stall is set;
// from then on it reads nothing more from its clients, as a server that
// takes a request and then stops reading would.
type stallingProxy struct {
	ln    net.Listener
	stall atomic.Bool
	done  chan struct{}
	mu    sync.Mutex
	conns []net.Conn
}

func startStallingProxy(t *testing.T, target string) *stallingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallingProxy{ln: ln, done: make(chan struct{})}
	go p.serve(target)
	t.Cleanup(func() {
		close(p.done)
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *stallingProxy) serve(target string) {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go io.Copy(c, s)
		go func() {
			buf := make([]byte, 32<<10)
			for {
				if p.stall.Load() {
					<-p.done
					return
				}
				n, err := c.Read(buf)
				if n > 0 {
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					s.Close()
					return
				}
			}
		}()
	}
}

// TestStalledUploadEnds: a streamed upload to a server that stops reading
// fails once it has made no progress for the store's stall bound, with an
// error saying so, and Abort then returns at once: the fetch worker behind
// the writer is delayed, not frozen.
func TestStalledUploadEnds(t *testing.T) {
	srv := startServer(t)
	proxy := startStallingProxy(t, srv.endpoint)
	cfg := srv.config()
	cfg.Endpoint = proxy.ln.Addr().String()
	cfg.SinglePutSize = 1
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New through the proxy: %v", err)
	}
	s.stall = 300 * time.Millisecond
	w, err := s.Create(context.Background(), storage.Expect{})
	if err != nil {
		t.Fatal(err)
	}
	proxy.stall.Store(true)

	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<20)
		var err error
		for i := 0; i < 64 && err == nil; i++ {
			_, err = w.Write(buf)
		}
		if err == nil {
			_, err = w.Commit(context.Background())
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no progress for 300ms") || !errors.Is(err, errStalled) {
			t.Fatalf("write to a stalled server: %v, want it ended after 300ms without progress", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write to a stalled server still waiting after 30s (stall bound 300ms)")
	}
	aborted := make(chan error, 1)
	go func() { aborted <- w.Abort() }()
	select {
	case <-aborted:
	case <-time.After(30 * time.Second):
		t.Fatal("Abort of a stalled upload still waiting after 30s")
	}
}
