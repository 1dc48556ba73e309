package check

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

// DashboardFile is the Grafana dashboard of deploy/grafana.
const DashboardFile = "grafana/viaduct.json"

// labelValues is Grafana's variable query label_values(expr, label),
// which is not PromQL: its expr is.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// Query is one PromQL query of a dashboard; Label is the label a
// label_values variable lists.
type Query struct {
	Expr, Label string
}

// DashboardQueries are the PromQL queries of a dashboard's panels and
// query variables, by where they are.
func DashboardQueries(file string) (map[string]Query, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading dashboard: %w", err)
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	out := map[string]Query{}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			return nil, fmt.Errorf("%s: variable %s: %w", file, v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q.Query)
		if m == nil {
			return nil, fmt.Errorf("%s: variable %s: query %q is not label_values(expr, label)", file, v.Name, q.Query)
		}
		out["variable "+v.Name] = Query{Expr: m[1], Label: m[2]}
	}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				out[fmt.Sprintf("panel %q query %s", p.Title, t.RefID)] = Query{Expr: t.Expr}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out, nil
}

// panel is what DashboardQueries reads of a panel: its queries, and the
// panels of a row.
type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}
