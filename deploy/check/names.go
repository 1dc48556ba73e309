package check

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// NamesFile is where the names every rule and dashboard query reads are
// kept for package deploy, in the main module, which checks them against
// the series a running node exports without a PromQL parser of its own.
// TestNamesFileIsCurrent keeps it current; go test -update rewrites it.
const NamesFile = "testdata/promql-names.json"

// Selector is a metric an expression reads, with the label names of its
// matchers.
type Selector struct {
	Metric string   `json:"metric"`
	Labels []string `json:"labels"`
}

// Names are what an expression names: the metrics it reads, and the labels
// it groups or matches on (by, without, on, ignoring, group_left,
// group_right, and the label of Grafana's label_values).
type Names struct {
	Selectors []Selector `json:"selectors"`
	Grouping  []string   `json:"grouping,omitempty"`
}

// NamesOf reads the names of a parsed expression. A metric selected only
// by a __name__ matcher is refused: its name cannot be checked.
func NamesOf(e parser.Expr) (Names, error) {
	out := Names{Selectors: []Selector{}}
	var err error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			if n.Name == "" {
				err = fmt.Errorf("%s: a metric named by __name__ cannot be checked", n)
				return err
			}
			s := Selector{Metric: n.Name, Labels: []string{}}
			for _, m := range n.LabelMatchers {
				if m.Name != labels.MetricName {
					s.Labels = append(s.Labels, m.Name)
				}
			}
			out.Selectors = append(out.Selectors, s)
		case *parser.AggregateExpr:
			out.Grouping = append(out.Grouping, n.Grouping...)
		case *parser.BinaryExpr:
			if vm := n.VectorMatching; vm != nil {
				out.Grouping = append(out.Grouping, vm.MatchingLabels...)
				out.Grouping = append(out.Grouping, vm.Include...)
			}
		}
		return nil
	})
	return out, err
}

// DeployNames are the names of every alert rule's and dashboard query's
// expression, by where it is: "alert NAME", "record NAME", "variable
// NAME", "panel "TITLE" query REF".
func DeployNames() (map[string]Names, error) {
	out := map[string]Names{}
	files, err := filepath.Glob(path(RulesGlob))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		g, err := Rules(f)
		if err != nil {
			return nil, err
		}
		for _, grp := range g.Groups {
			for _, r := range grp.Rules {
				where := "alert " + r.Alert
				if r.Record != "" {
					where = "record " + r.Record
				}
				if err := addNames(out, where, r.Expr, PromQL); err != nil {
					return nil, err
				}
			}
		}
	}
	qs, err := DashboardQueries(path(DashboardFile))
	if err != nil {
		return nil, err
	}
	for where, q := range qs {
		if err := addNames(out, where, q.Expr, GrafanaPromQL); err != nil {
			return nil, err
		}
		if q.Label != "" {
			n := out[where]
			n.Grouping = append(n.Grouping, q.Label)
			out[where] = n
		}
	}
	return out, nil
}

func addNames(out map[string]Names, where, expr string, parse func(string) (parser.Expr, error)) error {
	e, err := parse(expr)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	n, err := NamesOf(e)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if _, dup := out[where]; dup {
		return fmt.Errorf("%s: named twice", where)
	}
	slices.Sort(n.Grouping)
	out[where] = n
	return nil
}
