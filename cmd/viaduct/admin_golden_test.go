package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/internal/testutil"
	"github.com/viaduct-mirror/viaduct/internal/testutil/simtest"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

var updateGolden = flag.Bool("update", false, "rewrite the admin CLI's golden files in testdata/admin")

// goldenNow is the clock the golden tables are drawn at; the times the
// node reported are set relative to it, so that "12s ago" reads the same
// on every run.
var goldenNow = time.Date(2026, 3, 4, 10, 0, 12, 0, time.UTC)

// TestAdminGolden asks a running node with a healthy Source ("good") and
// one whose host refuses connections ("bad") what the admin CLI shows of
// them: the table of Sources, each Source alone and the JSON of the
// failing one. Only what changes from run to run is fixed before the
// answer is drawn: times, ports, the cursor's lag.
func TestAdminGolden(t *testing.T) {
	good := simtest.Serve(t, sim.Config{Resources: 4, Seed: 81})
	closed := httptest.NewServer(nil)
	badURL := closed.URL
	closed.Close()

	yes := true
	cfg := node.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Admin.AllowNoTokenOnLoopback = true
	cfg.Upstream.AllowLoopback = true
	cfg.Upstream.MaxAttempts = 1
	cfg.Harvest.ImmediateFirstPass = false
	cfg.Sources = []harvester.SourceConfig{
		{Name: "good", URL: good.URL + "/", Schedule: "@every 1h", AllowLoopback: &yes},
		{Name: "bad", URL: badURL + "/", Schedule: "@every 1h", AllowLoopback: &yes},
	}
	cfg.Fill()
	n, err := node.Start(t.Context(), cfg, node.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	cli := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, append([]string{"admin", "--url", n.AdminURL()}, args...)...)
	}

	if code, out, errOut := cli("sync", "good", "--wait"); code != 0 || out != "sync of good: done\n" {
		t.Fatalf("sync good --wait: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := cli("sync", "bad", "--wait")
	if code != 1 || !strings.HasPrefix(out, "sync of bad: failed: ") || !strings.Contains(errOut, "502") {
		t.Fatalf("sync bad --wait: exit %d\n%s%s", code, out, errOut)
	}
	testutil.Eventually(t, time.Minute, "good's 4 bitstreams fetched", func() bool {
		_, out, _ := cli("-o", "json", "sources", "good")
		var v admin.SourceView
		return json.Unmarshal([]byte(out), &v) == nil && v.Fetched == 4
	})

	hosts := strings.NewReplacer(good.URL, "http://good.example", badURL, "http://bad.example",
		strings.TrimPrefix(badURL, "http://"), "bad.example")
	views := func(args ...string) []byte {
		t.Helper()
		code, out, errOut := cli(append([]string{"-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("admin %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return []byte(hosts.Replace(out))
	}
	one := func(name string) []byte {
		var v admin.SourceView
		if err := json.Unmarshal(views("sources", name), &v); err != nil {
			t.Fatal(err)
		}
		return encodeIndented(t, fixTimes(v))
	}
	var all []admin.SourceView
	if err := json.Unmarshal(views("sources"), &all); err != nil {
		t.Fatal(err)
	}
	for i := range all {
		all[i] = fixTimes(all[i])
	}

	// The table a person gets through the command line names the Source
	// and its whole error; --config reads the admin section alone, so a
	// mistake elsewhere in the file does not stop it.
	conf := filepath.Join(t.TempDir(), "viaduct.yaml")
	yaml := "log:\n  level: loud\nsources:\n  - name: x\n    url: ftp://x\nadmin:\n  listen: " +
		strings.TrimPrefix(n.AdminURL(), "http://") + "\n  allow_no_token_on_loopback: true\n"
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "admin", "--config", conf, "sources", "bad")
	if code != 0 || !strings.HasPrefix(out, "source         bad\n") || !strings.Contains(out, "connection refused") {
		t.Fatalf("admin --config sources bad: exit %d\n%s%s", code, out, errOut)
	}

	for _, c := range []struct {
		name   string
		body   []byte
		render func(w *bytes.Buffer, body []byte) error
	}{
		{"sources.txt", encodeIndented(t, all), table(renderSources)},
		{"sources-good.txt", one("good"), table(renderSource)},
		{"sources-bad.txt", one("bad"), table(renderSource)},
		{"sources-bad.json", one("bad"), func(w *bytes.Buffer, body []byte) error { _, err := w.Write(body); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := c.render(&got, c.body); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "admin", c.name), got.Bytes())
		})
	}
}

func table(r func(w io.Writer, body []byte, now time.Time) error) func(*bytes.Buffer, []byte) error {
	return func(w *bytes.Buffer, body []byte) error { return r(w, body, goldenNow) }
}

// fixTimes sets the times of v relative to goldenNow: the last pass
// ended 12s before it and took 2s, the cursor is 3m12s behind.
func fixTimes(v admin.SourceView) admin.SourceView {
	start, end := goldenNow.Add(-14*time.Second), goldenNow.Add(-12*time.Second)
	fix := func(p *harvester.PassRecord) {
		if p != nil {
			p.Start, p.End = start, end
		}
	}
	fix(v.LastPass)
	fix(v.LastError)
	for i := range v.Recent {
		fix(&v.Recent[i])
	}
	if !v.LastSuccess.IsZero() {
		v.LastSuccess = end
	}
	if !v.Baseline.IsZero() {
		v.Baseline = end
	}
	if !v.Cursor.IsZero() {
		v.Cursor = goldenNow.Add(-3*time.Minute - 12*time.Second)
		v.CursorLag = admin.Duration(3*time.Minute + 12*time.Second)
	}
	return v
}

func encodeIndented(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// checkGolden compares got with the file at path, or rewrites the file
// with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestAdminGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -run TestAdminGolden -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}
