package deploy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

// promMade are the series Prometheus makes itself for every target, and
// the labels it adds to every series it scrapes.
var (
	promMade   = []string{"up", "scrape_duration_seconds", "scrape_samples_scraped"}
	promLabels = []string{"job", "instance"}
)

// exported is what a node's /metrics holds: each series name with the
// label names seen on it.
type exported map[string]map[string]bool

// adminToken is the test node's admin token.
const adminToken = "deploy-test-token"

// adminDo makes a request of the admin listener with the token.
func adminDo(t *testing.T, method, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

// scrapeMetrics reads a Prometheus text exposition, as Prometheus does
// with the admin token.
func scrapeMetrics(t *testing.T, url string) exported {
	t.Helper()
	resp := adminDo(t, "GET", url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	out, err := parseExposition(string(b))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return out
}

// parseExposition reads the series names and label names of the text
// format with Prometheus's own parser. A histogram's or summary's family
// is the series Prometheus stores: _bucket (with le) or the family's
// name (with quantile), _sum and _count.
func parseExposition(text string) (exported, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	out := exported{}
	add := func(name string, labels []*dto.LabelPair, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range labels {
			out[name][l.GetName()] = true
		}
		for _, l := range extra {
			out[name][l] = true
		}
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				add(name+"_bucket", m.GetLabel(), "le")
				add(name+"_sum", m.GetLabel())
				add(name+"_count", m.GetLabel())
			case dto.MetricType_SUMMARY:
				add(name, m.GetLabel(), "quantile")
				add(name+"_sum", m.GetLabel())
				add(name+"_count", m.GetLabel())
			default:
				add(name, m.GetLabel())
			}
		}
	}
	return out, nil
}

// missing lists what the expressions name that the node does not export:
// metrics, labels of their matchers, and grouping labels that none of an
// expression's metrics has.
func (e exported) missing(exprs map[string]exprNames) []string {
	var out []string
	has := func(metric, label string) bool {
		return slices.Contains(promLabels, label) || e[metric][label] || label == "job" && slices.Contains(promMade, metric)
	}
	for where, names := range exprs {
		for _, s := range names.Selectors {
			if _, ok := e[s.Metric]; !ok && !slices.Contains(promMade, s.Metric) {
				out = append(out, fmt.Sprintf("%s: metric %s", where, s.Metric))
				continue
			}
			for _, l := range s.Labels {
				if !has(s.Metric, l) {
					out = append(out, fmt.Sprintf("%s: label %s of %s", where, l, s.Metric))
				}
			}
		}
		for _, l := range slices.Compact(slices.Sorted(slices.Values(names.Grouping))) {
			if !slices.ContainsFunc(names.Selectors, func(s selector) bool { return has(s.Metric, l) }) {
				out = append(out, fmt.Sprintf("%s: grouping label %s is on none of its metrics", where, l))
			}
		}
	}
	slices.Sort(out)
	return out
}

// startNode starts a node as `viaduct serve` does, on an embedded NATS
// server, with two Sources: "healthy", a simulated Source one of whose
// resources declares a wrong hash (so a change is retried, then
// dead-lettered), and "broken", which nothing answers. It asks for a pass
// over each and reads the republished Source Description, so that the
// series made by events have values.
func startNode(t *testing.T) *node.Node {
	t.Helper()
	src := simtest.Serve(t, sim.Config{Resources: 20, Seed: 1})
	if err := src.SetFault("/res/3", sim.Fault{WrongHash: true}); err != nil {
		t.Fatal(err)
	}
	yes := true
	cfg := node.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Admin.TokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(cfg.Admin.TokenFile, []byte(adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Sources = []harvester.SourceConfig{
		{Name: "healthy", URL: src.URL, Schedule: "@every 1h", AllowLoopback: &yes},
		// Port 1 on loopback: connections are refused at once.
		{Name: "broken", URL: "http://127.0.0.1:1/", Schedule: "@every 1h", AllowLoopback: &yes},
	}
	// Retries resolve in milliseconds rather than minutes.
	cfg.Upstream.AllowLoopback = true
	cfg.Upstream.MaxAttempts = 2
	cfg.Upstream.BackoffBase = 10 * time.Millisecond
	cfg.Upstream.BackoffMax = 50 * time.Millisecond
	cfg.Queue.Backoff = nil
	cfg.Queue.AckWait = 5 * time.Second
	cfg.Queue.MaxDeliver = 2
	cfg.Queue.MaxStore = 1 << 30
	cfg.Fetch.Workers = 4
	cfg.Fetch.RetryBase = 50 * time.Millisecond
	cfg.Fetch.RetryMax = 200 * time.Millisecond
	cfg.Fetch.InProgressEvery = time.Second // well under the ack wait
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	n, err := node.Start(context.Background(), cfg, node.Options{Version: "test"})
	if err != nil {
		t.Fatalf("starting node: %v", err)
	}
	t.Cleanup(func() { n.Close() })
	for _, s := range cfg.Sources {
		resp := adminDo(t, "POST", n.AdminURL()+"/admin/sources/"+s.Name+"/sync")
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("sync %s: %s", s.Name, resp.Status)
		}
	}
	// A Destination's first request.
	resp, err := http.Get(n.URL() + "/.well-known/resourcesync")
	if err != nil {
		t.Fatalf("GET the Source Description: %v", err)
	}
	resp.Body.Close()
	return n
}

// TestMetricsExist starts a real node and checks that every metric and
// label the alert rules and the dashboard name is one it exports, and
// that the health paths the proxy and the probes ask for answer.
func TestMetricsExist(t *testing.T) {
	exprs := namedExprs(t)
	n := startNode(t)

	var gaps []string
	t.Cleanup(func() {
		if len(gaps) > 0 {
			t.Logf("named but not exported:\n%s", strings.Join(gaps, "\n"))
		}
	})
	testutil.Eventually(t, time.Minute, "every metric the rules and the dashboard name to be exported", func() bool {
		gaps = scrapeMetrics(t, n.AdminURL()+"/metrics").missing(exprs)
		return len(gaps) == 0
	})

	// Each probe asks the listener its port is in the deployment's
	// configuration, without a token.
	k := loadKube(t)
	c := loadCompose(t)
	cc := c.viaductConfig(t, c.viaducts[0])
	site := readCaddyfile(t, c.boundFile(t, c.proxy, "/etc/caddy/Caddyfile"))
	type asked struct {
		probe
		cfg node.Config
	}
	var probes []asked
	for _, p := range k.probes(t) {
		probes = append(probes, asked{p, k.cfg.Config})
	}
	_, port := hostPort(t, "listen", cc.Listen)
	probes = append(probes, asked{probe{"Caddyfile health_uri", port, site.healthURI}, cc.Config})
	for _, p := range probes {
		base := ""
		if _, lp := hostPort(t, "listen", p.cfg.Listen); lp == p.port {
			base = n.URL()
		} else if _, ap := hostPort(t, "admin.listen", p.cfg.Admin.Listen); ap == p.port {
			base = n.AdminURL()
		} else {
			t.Fatalf("%s: port %d is neither listener's", p.what, p.port)
		}
		resp, err := http.Get(base + p.path)
		if err != nil {
			t.Fatalf("%s: GET %s: %v", p.what, p.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: GET %s: %s", p.what, p.path, resp.Status)
		}
	}
}

// TestMissingNamesReported checks the check itself: names a node does not
// export are reported.
func TestMissingNamesReported(t *testing.T) {
	e, err := parseExposition("# TYPE a_total counter\na_total{source=\"x\",kind=\"y\"} 1\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\nb 2\n")
	if err != nil {
		t.Fatal(err)
	}
	got := e.missing(map[string]exprNames{
		"ok": {[]selector{{"a_total", []string{"kind", "instance"}}, {"b", nil}, {"up", nil}, {"h_bucket", []string{"le"}}},
			[]string{"source", "job", "le"}},
		"metric":  {[]selector{{"viaduct_no_such_metric_total", nil}}, nil},
		"label":   {[]selector{{"a_total", []string{"reason"}}}, nil},
		"grouped": {[]selector{{"b", nil}}, []string{"host"}},
	})
	want := []string{
		"grouped: grouping label host is on none of its metrics",
		"label: label reason of a_total",
		"metric: metric viaduct_no_such_metric_total",
	}
	if !slices.Equal(got, want) {
		t.Errorf("missing:\n got %q\nwant %q", got, want)
	}
}
