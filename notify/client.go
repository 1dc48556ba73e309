package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// hubClient is the hub's client for callbacks and the external hub: no
// redirects, and no connections to loopback, private, link-local or
// unspecified addresses unless allowLocal, checked on the address really
// dialled (a policy sees only names).
func hubClient(allowLocal bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if !allowLocal {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("hub: dialling %s: %w", address, err)
			}
			if err := upstream.CheckAddress(ap.Addr(), false, false); err != nil {
				return fmt.Errorf("hub: dialling %s: %w: %w", address, errNotPublic, err)
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy: nil, DialContext: d.DialContext, ForceAttemptHTTP2: true,
		MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var errNotPublic = errors.New("address is not public")

// streamDepth is how many messages a stream holds now.
func streamDepth(ctx context.Context, q *queue.Queue, stream string) (uint64, error) {
	s, err := q.JetStream().Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.Msgs, nil
}
