package check

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite deploy/"+NamesFile+" from the rules and the dashboard")

// namesFile is the content of NamesFile: the names, and where they come
// from.
type namesFile struct {
	Origin string           `json:"origin"`
	Exprs  map[string]Names `json:"exprs"`
}

// TestNamesFileIsCurrent checks that deploy/testdata/promql-names.json
// holds what Prometheus's parser reads in today's rules and dashboard,
// since package deploy checks those names against a running node.
func TestNamesFileIsCurrent(t *testing.T) {
	names, err := DeployNames()
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(namesFile{
		Origin: "written by `go test ./... -update` in deploy/check from deploy/prometheus and deploy/grafana; read by package deploy's TestMetricsExist",
		Exprs:  names,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile(path(NamesFile), want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path(NamesFile))
	if err != nil {
		t.Fatalf("%v (go test ./... -update in deploy/check writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("deploy/%s is not what the rules and dashboard name now: run go test ./... -update in deploy/check", NamesFile)
	}
}

func TestNamesOf(t *testing.T) {
	for _, c := range []struct {
		expr      string
		selectors []Selector
		grouping  []string
	}{
		{`up{job="viaduct"} == 0`, []Selector{{"up", []string{"job"}}}, nil},
		{`sum by (source) (rate(a_total{result="error"}[30m])) / on (source) group_left (kind) b`,
			[]Selector{{"a_total", []string{"result"}}, {"b", []string{}}}, []string{"kind", "source", "source"}},
		{`histogram_quantile(0.95, sum without (pod) (rate(x_bucket[5m])))`, []Selector{{"x_bucket", []string{}}}, []string{"pod"}},
		{`max_over_time(deriv(g[1h:5m])[2h:]) > Inf`, []Selector{{"g", []string{}}}, nil},
	} {
		e, err := PromQL(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := NamesOf(e)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got.Grouping)
		if !slices.EqualFunc(got.Selectors, c.selectors, func(a, b Selector) bool {
			return a.Metric == b.Metric && slices.Equal(a.Labels, b.Labels)
		}) || !slices.Equal(got.Grouping, c.grouping) {
			t.Errorf("%s:\n got %v %q\nwant %v %q", c.expr, got.Selectors, got.Grouping, c.selectors, c.grouping)
		}
	}
	e, _ := PromQL(`{__name__=~"viaduct_.*"}`)
	if _, err := NamesOf(e); err == nil {
		t.Error(`{__name__=~"viaduct_.*"}: read without an error`)
	}
}
