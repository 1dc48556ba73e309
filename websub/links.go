package websub

import (
	"github.com/viaduct-mirror/viaduct/upstream"
)

// linkHeader is the Link header value the spec requires on topic
// responses, publications and deliveries.
func linkHeader(topic, hub string) string {
	return "<" + topic + `>; rel="self", <` + hub + `>; rel="hub"`
}

// selfAndHub reads the self and hub links of Link header values; either
// is "" when absent.
func selfAndHub(values []string) (self, hub string) {
	for _, v := range values {
		for _, l := range upstream.ParseLinkHeader(v) {
			if self == "" && l.HasRel("self") {
				self = l.Target
			}
			if hub == "" && l.HasRel("hub") {
				hub = l.Target
			}
		}
	}
	return self, hub
}
