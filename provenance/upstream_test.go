package provenance

import (
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestUpstreamIgnoresViaToNowhereOrToItself(t *testing.T) {
	up := originChange(
		resourcesync.Link{Rel: "via", Href: ""},
		resourcesync.Link{Rel: "via", Href: "http://original.example.com/res1.html"},
	)
	chain := Upstream(up)
	if len(chain) != 1 || chain[0].Role != RoleOrigin || chain[0].URI != up.URI {
		t.Errorf("chain = %+v, want the upstream alone as origin", chain)
	}
}

func TestUpstreamAggregatorTimeFallsBackToChangeTime(t *testing.T) {
	up := originChange(resourcesync.Link{Rel: "VIA", Href: "http://origin.example.org/r"})
	up.Modified = time.Time{}
	chain := Upstream(up)
	if len(chain) != 2 || chain[0].URI != "http://origin.example.org/r" || chain[1].Role != RoleAggregator ||
		!chain[1].Modified.Equal(up.Time) {
		t.Errorf("chain = %+v, want origin then the aggregator at its change time %s", chain, up.Time)
	}
}
