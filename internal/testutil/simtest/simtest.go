// Package simtest starts the simulated Source for the tests of the
// packages that read from it. It stands apart from testutil because
// package sim's own tests use testutil, which therefore cannot import sim.
// Only tests import it.
package simtest

import (
	"testing"

	"github.com/viaduct-mirror/viaduct/sim"
)

// Serve serves a Source made from cfg on a loopback port until the test
// ends, failing the test if it cannot.
func Serve(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	src, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim: %v", err)
	}
	srv, err := sim.Listen("127.0.0.1:0", src, nil)
	if err != nil {
		t.Fatalf("sim listen: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}
