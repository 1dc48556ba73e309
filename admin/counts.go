package admin

import (
	dto "github.com/prometheus/client_model/go"
)

// sourceCount is what the metrics say of one Source.
type sourceCount struct {
	queued, fetched, failed uint64
}

// countMetrics are the counters summed per Source label into each count.
var countMetrics = map[string]func(*sourceCount, uint64){
	"viaduct_harvester_changes_total":   func(c *sourceCount, n uint64) { c.queued += n },
	"viaduct_fetch_fetched_total":       func(c *sourceCount, n uint64) { c.fetched += n },
	"viaduct_fetch_dead_lettered_total": func(c *sourceCount, n uint64) { c.failed += n },
}

// sourceCounts reads the counters that carry a source label from the
// node's registry. A counter without that label counts for no Source.
func (s *Server) sourceCounts() map[string]sourceCount {
	out := map[string]sourceCount{}
	if s.deps.Gatherer == nil {
		return out
	}
	mfs, err := s.deps.Gatherer.Gather()
	if err != nil && len(mfs) == 0 {
		return out
	}
	for _, mf := range mfs {
		add, ok := countMetrics[mf.GetName()]
		if !ok {
			continue
		}
		for _, m := range mf.GetMetric() {
			src, ok := label(m, "source")
			if !ok || m.GetCounter() == nil {
				continue
			}
			c := out[src]
			add(&c, uint64(m.GetCounter().GetValue()))
			out[src] = c
		}
	}
	return out
}

func label(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}
