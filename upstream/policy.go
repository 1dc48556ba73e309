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
