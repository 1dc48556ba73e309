package notify

import (
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// headerLinks carries a delivery's links (the span contexts of the changes
// it notifies) in HUBOUT, as space-separated W3C traceparent values.
const headerLinks = "Viaduct-Links"

func encodeLinks(links []trace.SpanContext) string {
	parts := make([]string, 0, len(links))
	for _, sc := range links {
		if !sc.IsValid() {
			continue
		}
		flags := "00"
		if sc.IsSampled() {
			flags = "01"
		}
		parts = append(parts, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-"+flags)
	}
	return strings.Join(parts, " ")
}

// decodeLinks reads what encodeLinks wrote; what does not parse is left
// out: a link is worth less than the delivery.
func decodeLinks(v string) []trace.SpanContext {
	var out []trace.SpanContext
	for _, p := range strings.Fields(v) {
		f := strings.Split(p, "-")
		if len(f) != 4 {
			continue
		}
		tid, err1 := trace.TraceIDFromHex(f[1])
		sid, err2 := trace.SpanIDFromHex(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		var flags trace.TraceFlags
		if f[3] == "01" {
			flags = trace.FlagsSampled
		}
		out = append(out, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags, Remote: true}))
	}
	return out
}
