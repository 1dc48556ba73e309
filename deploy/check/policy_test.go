package check

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

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

// TestAlertsPolicy checks what Prometheus accepts but an operator would
// miss: an alert for each condition that needs one, each alert once, a
// severity routing can use, and words for the page.
func TestAlertsPolicy(t *testing.T) {
	files, _ := filepath.Glob(path(RulesGlob))
	alerts := map[string]bool{}
	for _, f := range files {
		g, err := Rules(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, grp := range g.Groups {
			for _, r := range grp.Rules {
				if r.Alert == "" {
					continue
				}
				what := fmt.Sprintf("%s: group %s: alert %s", f, grp.Name, r.Alert)
				if alerts[r.Alert] {
					t.Errorf("%s is defined twice", what)
				}
				alerts[r.Alert] = true
				if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
					t.Errorf("%s: severity %q is not critical, warning or info", what, r.Labels["severity"])
				}
				if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
					t.Errorf("%s: want a summary and a description", what)
				}
			}
		}
	}
	for a, why := range alertsRequired {
		if !alerts[a] {
			t.Errorf("no alert %s: nothing says when %s", a, why)
		}
	}
}

// TestDashboardPolicy checks what Grafana imports but shows wrong: a
// dashboard tied to one Grafana's data source, panels without a place or
// an id, queries with variables the dashboard does not define.
func TestDashboardPolicy(t *testing.T) {
	file := path(DashboardFile)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string            `json:"uid"`
		Title      string            `json:"title"`
		Panels     []json.RawMessage `json:"panels"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: no uid or title", file)
	}
	vars := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
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
				Targets []json.RawMessage `json:"targets"`
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
		}
	}
	walk(d.Panels)
	qs, err := DashboardQueries(file)
	if err != nil {
		t.Fatal(err)
	}
	for where, q := range qs {
		for _, m := range regexp.MustCompile(`\$\{?(\w+)`).FindAllStringSubmatch(q.Expr, -1) {
			if !vars[m[1]] {
				t.Errorf("%s: %s uses $%s, which the dashboard does not define", file, where, m[1])
			}
		}
	}
}
