package simtest

import (
	"net/http"
	"testing"

	"github.com/viaduct-mirror/viaduct/sim"
)

func TestServeAnswersOnLoopback(t *testing.T) {
	srv := Serve(t, sim.Config{Seed: 1})
	resp, err := http.Get(srv.URL + sim.PathCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET Capability List: %s", resp.Status)
	}
}
