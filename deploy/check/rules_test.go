package check

import (
	"path/filepath"
	"testing"
)

func TestRulesLoad(t *testing.T) {
	files, err := filepath.Glob(path(RulesGlob))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files (%v)", err)
	}
	for _, f := range files {
		g, err := Rules(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if len(g.Groups) == 0 {
			t.Errorf("%s: no groups", f)
		}
	}
}

func TestDashboardQueriesParse(t *testing.T) {
	qs, err := DashboardQueries(path(DashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) == 0 {
		t.Fatal("no queries")
	}
	for where, q := range qs {
		if _, err := GrafanaPromQL(q.Expr); err != nil {
			t.Errorf("%s: %v", where, err)
		}
	}
}

func TestRulesRefuseBroken(t *testing.T) {
	const file = "prometheus/viaduct.rules.yaml"
	for _, c := range []struct {
		breakage
		want string
	}{
		{breakage{"a PromQL typo: a function misspelt", "sum by (source) (increase(", "sum by (source) (increse("}, `unknown function with name "increse"`},
		{breakage{"a PromQL typo: a parenthesis missing", "sum by (source) (increase(", "sum by (source (increase("}, "parse error"},
		{breakage{"a duration in an unknown unit", "for: 5m", "for: 5min"}, `unknown unit "min"`},
		{breakage{"a misspelt rule field", "annotations:", "anotations:"}, "anotations"},
		{breakage{"a template that does not parse", "{{ $labels.instance }}", "{{ $labels.instance }"}, "template"},
	} {
		_, err := Rules(broken(t, file, c.breakage))
		refused(t, c.breakage, err, c.want)
	}
}

func TestDashboardRefusesBroken(t *testing.T) {
	b := breakage{"a PromQL typo in a panel", `rate(`, `rate((`}
	qs, err := DashboardQueries(broken(t, DashboardFile, b))
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, q := range qs {
		if _, err := GrafanaPromQL(q.Expr); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("%s: %d queries refused, want 1: %v", b.name, len(errs), errs)
	}
	refused(t, b, errs[0], "parse error")
}
