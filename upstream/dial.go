package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// addrRule is the address part of a Policy. Connections are pooled per
// addrRule, so a connection dialled under a lenient rule is never reused by
// a request under a strict one.
type addrRule struct {
	private  bool
	loopback bool
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// check reports why ip may not be connected to under r, or nil
// (CheckAddress).
func (r addrRule) check(ip netip.Addr) error { return CheckAddress(ip, r.loopback, r.private) }

// dialer connects only to addresses its rule allows: it resolves the host
// itself, checks every address, and checks again in the socket's Control
// hook, so neither a DNS answer nor a changed answer between check and
// connect can lead to a refused address.
type dialer struct {
	rule    addrRule
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
}

func newDialer(cfg *Config, rule addrRule) *dialer {
	d := &dialer{rule: rule, resolve: cfg.Resolve, dial: cfg.Dial}
	if d.resolve == nil {
		d.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if d.dial == nil {
		nd := &net.Dialer{Timeout: cfg.ConnectTimeout, Control: d.control}
		d.dial = nd.DialContext
	}
	return d
}

// DialContext is the Transport's dial function.
func (d *dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ips, err = d.resolve(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
	}
	// One refused address refuses the name: a host that answers with both
	// a public and a private address is not to be trusted with either.
	for _, ip := range ips {
		if err := d.rule.check(ip); err != nil {
			return nil, fmt.Errorf("host %s: %w", host, err)
		}
	}
	var errs []error
	for _, ip := range ips {
		c, err := d.dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// control re-checks the address the socket is about to connect to.
func (d *dialer) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &policyError{why: fmt.Sprintf("address %q: %v", address, err)}
	}
	return d.rule.check(ap.Addr())
}
