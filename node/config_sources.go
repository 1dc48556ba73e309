package node

import (
	"fmt"
	"strings"

	"github.com/viaduct-mirror/viaduct/harvester"
)

// placeholderURL stands in for a Source's url while another of its fields
// is checked.
const placeholderURL = "http://source.invalid/"

// checkSources reports every mistake in the Sources, each naming its
// field as sources[i].field. The harvester's ValidateSources stops at the
// first mistake, which would have an operator fix one Source per run; so
// each field of each Source is given to it on its own, beside a valid
// name and url, and its answer moved to the Source's place in the file.
func (c *Config) checkSources() []error {
	var errs []error
	seen := make(map[string]int, len(c.Sources))
	for i, s := range c.Sources {
		at := fmt.Sprintf("sources[%d]", i)
		name := s.Name
		switch j, dup := seen[s.Name]; {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("%s.name: required", at))
			name = fmt.Sprintf("#%d", i)
		case dup:
			errs = append(errs, fmt.Errorf("%s.name: %q is already the name of sources[%d]", at, s.Name, j))
		default:
			seen[s.Name] = i
		}
		probes := []harvester.SourceConfig{{URL: s.URL}, {Schedule: s.Schedule}, {BaselineSchedule: s.BaselineSchedule}}
		for _, a := range s.Authorities {
			probes = append(probes, harvester.SourceConfig{Authorities: []string{a}})
		}
		for k, p := range probes {
			p.Name = name
			if k > 0 {
				p.URL = placeholderURL
			}
			err := c.Harvest.ValidateSources([]harvester.SourceConfig{p})
			if err == nil {
				continue
			}
			msg := strings.Replace(err.Error(), "sources[0]", at, 1)
			if k >= 3 {
				msg = strings.Replace(msg, "authorities[0]", fmt.Sprintf("authorities[%d]", k-3), 1)
			}
			errs = append(errs, fmt.Errorf("%s", msg))
		}
	}
	return errs
}
