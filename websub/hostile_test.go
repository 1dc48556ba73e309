package websub

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestCallbackPolicyMatchesUpstream: the hub refuses callbacks at the
// addresses the upstream client refuses: NAT64 and 6to4 of loopback,
// shared address space, documentation and other special-purpose blocks,
// and accepts public ones.
func TestCallbackPolicyMatchesUpstream(t *testing.T) {
	for _, host := range []string{
		"[64:ff9b::7f00:1]", "100.64.0.1", "[::ffff:127.0.0.1]", "[2002:7f00:1::1]", "[64:ff9b:1::1]",
		"192.0.2.1", "198.18.0.1", "240.0.0.1", "255.255.255.255", "0.1.2.3", "[2001:db8::1]",
		"[fc00::1]", "[fe80::1]", "169.254.169.254", "127.0.0.1", "10.1.2.3", "localhost",
	} {
		u, _ := url.Parse("http://" + host + "/cb")
		if err := DefaultCallbackPolicy(u); !errors.Is(err, ErrCallbackRefused) {
			t.Errorf("callback at %s: %v, want refused", host, err)
		}
	}
	for _, host := range []string{"93.184.215.14", "[2606:4700::1111]", "example.org"} {
		u, _ := url.Parse("http://" + host + "/cb")
		if err := DefaultCallbackPolicy(u); err != nil {
			t.Errorf("callback at %s: %v, want accepted", host, err)
		}
	}
}

// TestForgedDenialChangesNothing: a denial that no request of ours is
// waiting for (anyone who knows the callback URL and topic can send one)
// leaves an active subscription active, and makes the subscriber ask the
// hub again.
func TestForgedDenialChangesNothing(t *testing.T) {
	he, s, _, sub := subscribed(t)
	u, _ := url.Parse(sub.Callback)
	u.RawQuery = form("hub.mode", "denied", "hub.topic", he.topic, "hub.reason", "forged").Encode()
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if g, _ := s.Get(sub.ID); g.State != Active || g.Lease != time.Hour {
		t.Fatalf("subscription after a forged denial: %+v, want it active", g)
	}
}
