package websub

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/viaduct-mirror/viaduct/upstream"
)

// CallbackPolicy decides whether a Hub may call a subscriber's callback
// URL, so that subscribing cannot turn the hub into a tool for reaching
// addresses its operator did not mean to expose. It sees a parsed absolute
// http or https URL. The hub's HTTP client should check the addresses it
// dials as well: a policy sees names, not what they resolve to.
type CallbackPolicy func(u *url.URL) error

// ErrCallbackRefused wraps every refusal of a callback URL.
var ErrCallbackRefused = errors.New("callback refused")

// DefaultCallbackPolicy refuses callbacks whose host is "localhost" or an
// IP literal that the upstream client would refuse too
// (upstream.CheckAddress: loopback, private and shared address space,
// link-local, NAT64 and 6to4 of those, and the rest of the IANA
// special-purpose registries), so that the hub calls no address the
// harvester may not fetch from.
func DefaultCallbackPolicy(u *url.URL) error {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("%w: host %q is loopback", ErrCallbackRefused, host)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return nil // a name; the dialer checks what it resolves to
	}
	if err := upstream.CheckAddress(a, false, false); err != nil {
		return fmt.Errorf("%w: %w", ErrCallbackRefused, err)
	}
	return nil
}

// AllowAllCallbacks is a CallbackPolicy that accepts every http(s) URL,
// for tests and closed networks.
func AllowAllCallbacks(*url.URL) error { return nil }

// parseCallback checks the form WebSub requires of a callback and then
// asks policy.
func parseCallback(s string, policy CallbackPolicy) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCallbackRefused, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: scheme %q is not http or https", ErrCallbackRefused, u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, fmt.Errorf("%w: %q is not an absolute URL without user or fragment", ErrCallbackRefused, s)
	}
	if err := policy(u); err != nil {
		if !errors.Is(err, ErrCallbackRefused) {
			err = fmt.Errorf("%w: %w", ErrCallbackRefused, err)
		}
		return nil, err
	}
	return u, nil
}
