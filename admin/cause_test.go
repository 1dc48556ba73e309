package admin

import (
	"strings"
	"testing"
)

func TestCause(t *testing.T) {
	for _, c := range []struct{ name, err, want string }{
		{"unreachable Source",
			`source broken: discover source "broken" from http://127.0.0.1:1/: dial tcp 127.0.0.1:1: connect: connection refused after 2 attempts (http://127.0.0.1:1/, http://127.0.0.1:1/.well-known/resourcesync, http://127.0.0.1:1/robots.txt): no ResourceSync Source Description or Capability List found`,
			`dial tcp 127.0.0.1:1: connection refused after 2 attempts`},
		{"HTTP status",
			`source "alpha": reading Change List: source "alpha": GET http://example.org/changelist.xml: 404 Not Found`,
			`GET http://example.org/changelist.xml: 404 Not Found`},
		{"unknown host",
			`source x: GET http://nowhere.invalid/: dial tcp: lookup nowhere.invalid: no such host`,
			`lookup nowhere.invalid: no such host`},
		{"no low-level cause: the last part",
			`source x: reading http://example.org/rl.xml: line 3: resourcesync: capability "resourcelist" expected`,
			`capability "resourcelist" expected`},
		{"several lines: the first", "source x: first failure: 503 Service Unavailable\nsource x: second", `503 Service Unavailable`},
		{"empty", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Cause(c.err); got != c.want {
				t.Errorf("Cause(%q)\n got %q\nwant %q", c.err, got, c.want)
			}
		})
	}
	long := "x: " + strings.Repeat("a", 300)
	if got := []rune(Cause(long)); len(got) != causeMax {
		t.Errorf("a long cause is %d characters, want %d", len(got), causeMax)
	}
}
