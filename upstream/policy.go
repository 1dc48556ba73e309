package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Authority is the scheme, host and port of a URI, normalised: lower case,
// no trailing dot on the host, the port always written.
type Authority string

// ParseAuthority reads "scheme://host[:port]" (a path is ignored) into an
// Authority. Only http and https are accepted.
func ParseAuthority(s string) (Authority, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	return authorityOf(u)
}

func authorityOf(u *url.URL) (Authority, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", errors.New("no host")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return Authority(scheme + "://" + net.JoinHostPort(host, port)), nil
}

// Policy says which URIs one Source may make viaduct fetch, and which
// addresses its hosts may resolve to. It is immutable and safe for
// concurrent use.
type Policy struct {
	base        Authority
	authorities []Authority
	rule        addrRule
}

// NewPolicy is the Policy of a Source whose base URI is base (its Source
// Description or whatever URI the operator configured): base's authority,
// cfg.AllowedAuthorities, and cfg's address settings.
func NewPolicy(base string, cfg Config) (*Policy, error) {
	a, err := ParseAuthority(base)
	if err != nil {
		return nil, fmt.Errorf("policy for base URI %q: %w", base, err)
	}
	p := &Policy{base: a, authorities: []Authority{a}, rule: addrRule{private: cfg.AllowPrivate, loopback: cfg.AllowLoopback}}
	for _, s := range cfg.AllowedAuthorities {
		x, err := ParseAuthority(s)
		if err != nil {
			return nil, fmt.Errorf("policy: allowed authority %q: %w", s, err)
		}
		if !slices.Contains(p.authorities, x) {
			p.authorities = append(p.authorities, x)
		}
	}
	return p, nil
}

// Base is the authority of the Source's base URI.
func (p *Policy) Base() Authority { return p.base }

// Authorities lists every authority the Policy allows, the base first.
func (p *Policy) Authorities() []Authority { return slices.Clone(p.authorities) }

// Allow reports why uri may not be fetched, or nil. It checks the scheme,
// the authority and, when the host is an IP literal, the address; host
// names are checked again at dial time, on the addresses they resolve to.
func (p *Policy) Allow(uri string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return &policyError{why: err.Error()}
	}
	return p.allowURL(u)
}

func (p *Policy) allowURL(u *url.URL) error {
	if u.User != nil {
		return &policyError{why: "credentials in the URI are not allowed"}
	}
	a, err := authorityOf(u)
	if err != nil {
		return &policyError{why: err.Error()}
	}
	if !slices.Contains(p.authorities, a) {
		return &policyError{why: fmt.Sprintf("authority %s is not allowed for this Source (allowed: %s)", a, p.list())}
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if err := p.rule.check(ip); err != nil {
			return err
		}
	}
	return nil
}

func (p *Policy) list() string {
	s := make([]string, len(p.authorities))
	for i, a := range p.authorities {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// policyError is a refusal by the Policy; the Client turns it into an
// *Error of kind ErrForbidden.
type policyError struct{ why string }

func (e *policyError) Error() string { return "refused by policy: " + e.why }

// special are the blocks of the IANA IPv4 and IPv6 Special-Purpose
// Address Registries (and multicast, broadcast, reserved space) that are
// not globally reachable, with what CheckAddress calls them. Loopback and
// private blocks may be allowed by configuration; the others never are.
// IPv4-mapped, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are
// checked as the IPv4 address they reach.
var special = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "private"}, // shared address space (carrier-grade NAT)
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"}, // IETF protocol assignments
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"}, // documentation
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"}, // benchmarking
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast or broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved"},         // IPv4-compatible, deprecated
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"}, // local-use NAT64
	{netip.MustParsePrefix("100::/64"), "reserved"},      // discard-only
	{netip.MustParsePrefix("2001::/23"), "reserved"},     // IETF protocol assignments, Teredo, ORCHID, benchmarking
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"}, // documentation
	{netip.MustParsePrefix("3fff::/20"), "reserved"},     // documentation
	{netip.MustParsePrefix("5f00::/16"), "reserved"},     // SRv6 SIDs
	{netip.MustParsePrefix("fc00::/7"), "private"},       // unique local
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "link-local"}, // site-local, deprecated
	{netip.MustParsePrefix("ff00::/8"), "multicast or broadcast"},
}

var sixToFour = netip.MustParsePrefix("2002::/16")

// CheckAddress reports why ip may not be connected to, or nil: it is one
// of the special-purpose addresses above, loopback unless loopback is
// allowed, private (shared address space and unique local included) unless
// private is allowed. It is the one address policy of the process: the
// upstream client's dialer and Policy, and the WebSub hub's callbacks.
func CheckAddress(ip netip.Addr, loopback, private bool) error {
	ip = ip.Unmap().WithZone("")
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		// 64:ff9b::a.b.c.d reaches a.b.c.d through a NAT64 gateway.
		ip = netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(ip):
		// 2002:aabb:ccdd::/48 is the 6to4 network of aa.bb.cc.dd.
		ip = netip.AddrFrom4([4]byte(b[2:6]))
	}
	for _, s := range special {
		if !s.p.Contains(ip) {
			continue
		}
		if s.why == "loopback" && loopback || s.why == "private" && private {
			return nil
		}
		return &policyError{why: fmt.Sprintf("address %s is %s", ip, s.why)}
	}
	return nil
}
