package deploy

import (
	"encoding/json"
	"testing"
)

// promqlNames is where deploy/check keeps the names each alert rule and
// dashboard query reads, as Prometheus's own parser reads them (its
// TestNamesFileIsCurrent fails when the file is stale). This module has
// no PromQL parser: Prometheus's is kept out of viaduct's go.mod.
const promqlNames = "testdata/promql-names.json"

// selector is a metric an expression reads, with the label names its
// matchers use.
type selector struct {
	Metric string   `json:"metric"`
	Labels []string `json:"labels"`
}

// exprNames is what an expression names: the metrics it reads and the
// labels it groups or matches on.
type exprNames struct {
	Selectors []selector `json:"selectors"`
	Grouping  []string   `json:"grouping"`
}

// namedExprs are the names of every expression of the alert rules and
// the dashboard, by where they are.
func namedExprs(t *testing.T) map[string]exprNames {
	t.Helper()
	var f struct {
		Exprs map[string]exprNames `json:"exprs"`
	}
	if err := json.Unmarshal(readFile(t, promqlNames), &f); err != nil {
		t.Fatalf("%s: %v", promqlNames, err)
	}
	if len(f.Exprs) == 0 {
		t.Fatalf("%s: no expressions", promqlNames)
	}
	return f.Exprs
}
