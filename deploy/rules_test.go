package deploy

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert         string            `yaml:"alert"`
	Record        string            `yaml:"record"`
	Expr          string            `yaml:"expr"`
	For           string            `yaml:"for"`
	KeepFiringFor string            `yaml:"keep_firing_for"`
	Labels        map[string]string `yaml:"labels"`
	Annotations   map[string]string `yaml:"annotations"`
}

// alertsRequired are the conditions an operator must hear about, by the
// alert that says so.
var alertsRequired = map[string]string{
	"ViaductNodeDown":           "a node is down",
	"ViaductSourceFailing":      "a Source has had no successful pass for several schedules",
	"ViaductCursorLagGrowing":   "a Source's cursor lag grows",
	"ViaductDeadLetters":        "dead letters are present",
	"ViaductChangesNotDraining": "the CHANGES backlog does not drain",
	"ViaductCatalogLagging":     "a catalog lags EVENTS",
	"ViaductNATSDisconnected":   "a node has lost NATS",
	"ViaductBlobStoreErrors":    "the blob store fails",
}

// alertRules reads every rule file of deploy/prometheus and checks what
// Prometheus would refuse or an operator would miss.
func alertRules(t *testing.T) []rule {
	t.Helper()
	files, err := filepath.Glob("prometheus/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files in prometheus/ (%v)", err)
	}
	var rules []rule
	alerts := map[string]bool{}
	for _, f := range files {
		for _, rf := range decodeYAML[ruleFile](t, f, true) {
			for _, g := range rf.Groups {
				for _, r := range g.Rules {
					what := fmt.Sprintf("%s: group %s: rule %s%s", f, g.Name, r.Alert, r.Record)
					if (r.Alert == "") == (r.Record == "") || r.Expr == "" {
						t.Errorf("%s: want alert or record, and expr", what)
					}
					for _, d := range []string{r.For, r.KeepFiringFor} {
						if _, err := time.ParseDuration(d); d != "" && err != nil {
							t.Errorf("%s: %v", what, err)
						}
					}
					if r.Alert != "" {
						if alerts[r.Alert] {
							t.Errorf("%s: alert %s is defined twice", what, r.Alert)
						}
						alerts[r.Alert] = true
						if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
							t.Errorf("%s: severity %q is not critical, warning or info", what, r.Labels["severity"])
						}
						if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
							t.Errorf("%s: want a summary and a description", what)
						}
					}
					rules = append(rules, r)
				}
			}
		}
	}
	for a, why := range alertsRequired {
		if !alerts[a] {
			t.Errorf("no alert %s: nothing says when %s", a, why)
		}
	}
	return rules
}

// dashboardExprs reads the Grafana dashboard and returns each query it
// makes, by where it is, checking the dashboard's own references.
func dashboardExprs(t *testing.T) map[string]string {
	t.Helper()
	const file = "grafana/viaduct.json"
	var d struct {
		UID        string            `json:"uid"`
		Title      string            `json:"title"`
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(readFile(t, file), &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: no uid or title", file)
	}
	exprs := map[string]string{}
	vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("%s: variable %s: %v", file, v.Name, err)
		}
		m := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`).FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("%s: variable %s: query %q is not label_values(expr, label)", file, v.Name, q.Query)
			continue
		}
		exprs["variable "+v.Name] = m[1]
		exprs["variable "+v.Name+" label"] = fmt.Sprintf("count by (%s) (%s)", m[2], m[1])
	}
	if !vars["datasource"] {
		t.Errorf("%s: no datasource variable: the dashboard would be tied to one Grafana's data source", file)
	}
	ids := map[int]bool{}
	var walk func(raw []json.RawMessage)
	walk = func(raw []json.RawMessage) {
		for _, r := range raw {
			var p struct {
				ID         int                 `json:"id"`
				Type       string              `json:"type"`
				Title      string              `json:"title"`
				Panels     []json.RawMessage   `json:"panels"`
				GridPos    *struct{ H, W int } `json:"gridPos"`
				Datasource *struct {
					UID string `json:"uid"`
				} `json:"datasource"`
				Targets []struct {
					RefID string `json:"refId"`
					Expr  string `json:"expr"`
				} `json:"targets"`
			}
			if err := json.Unmarshal(r, &p); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if ids[p.ID] || p.ID == 0 {
				t.Errorf("%s: panel %q: id %d missing or repeated", file, p.Title, p.ID)
			}
			ids[p.ID] = true
			if p.GridPos == nil || p.GridPos.W == 0 || p.GridPos.H == 0 {
				t.Errorf("%s: panel %q: no gridPos", file, p.Title)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("%s: panel %q: data source is not ${datasource}", file, p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q: no queries", file, p.Title)
			}
			for _, tg := range p.Targets {
				exprs[fmt.Sprintf("panel %q query %s", p.Title, tg.RefID)] = tg.Expr
			}
		}
	}
	walk(d.Panels)
	for where, e := range exprs {
		for _, m := range regexp.MustCompile(`\$\{?(\w+)`).FindAllStringSubmatch(e, -1) {
			if !vars[m[1]] {
				t.Errorf("%s: %s uses $%s, which the dashboard does not define", file, where, m[1])
			}
		}
	}
	return exprs
}

// namedExprs are every expression of the alert rules and the dashboard,
// by where they are.
func namedExprs(t *testing.T) map[string]string {
	t.Helper()
	out := dashboardExprs(t)
	for _, r := range alertRules(t) {
		out["alert "+r.Alert+r.Record] = r.Expr
	}
	return out
}

func TestRulesAndDashboardParse(t *testing.T) {
	for where, e := range namedExprs(t) {
		if _, err := promNames(e); err != nil {
			t.Errorf("%s: %q: %v", where, e, err)
		}
	}
	// The rules' expressions are PromQL, not Go templates.
	for _, r := range alertRules(t) {
		if strings.Contains(r.Expr, "{{") {
			t.Errorf("alert %s: template braces in expr", r.Alert)
		}
	}
}
