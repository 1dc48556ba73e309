package node

import (
	"net/http/httptest"
	"testing"
)

func TestRouteKind(t *testing.T) {
	for path, want := range map[string]string{
		"/.well-known/resourcesync":            "document",
		"/alpha/capabilitylist.xml":            "document",
		"/alpha/resourcelist/3.xml":            "document",
		"/alpha/changelist/2026-11-28.xml":     "document",
		"/alpha/resourcedump.xml":              "document",
		"/alpha/r/https/example.org/a%20b.pdf": "bitstream",
		"/alpha/dumps/resourcedump-1.zip":      "dump",
		"/hub":                                 "hub",
		"/websub/callback/abc":                 "hub",
		"/readyz":                              "other",
		"/favicon.ico":                         "other",
	} {
		if got := routeKind(httptest.NewRequest("GET", path, nil)); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}
