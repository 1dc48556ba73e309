package node

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/sim"
)

// updateScreenshot rewrites docs/status-page.png from the browser test.
var updateScreenshot = flag.Bool("update-screenshot", false, "rewrite docs/status-page.png from the status page test")

// chromium finds Debian's Chromium; in CI its absence fails the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (make test-deps installs it)")
	}
	t.Skip("chromium is not installed (make test-deps installs it)")
	return ""
}

// headless runs Chromium on url with the extra arguments and returns its
// standard output.
func headless(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1400,1000", "--hide-scrollbars"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

// TestStatusPageInABrowser loads the status page of a node with a
// polled Source, a Source followed by push and a failing Source in a
// real headless browser and checks what it shows.
func TestStatusPageInABrowser(t *testing.T) {
	bin := chromium(t)
	good := startSource(t, sim.Config{Resources: 12, Seed: 71})
	pushed, hub := startPushSource(t, sim.Config{Resources: 5, Seed: 72})
	yes := true
	broken := harvester.SourceConfig{Name: "broken", URL: "http://127.0.0.1:1/", Schedule: "@every 1h", AllowLoopback: &yes}
	cfg := testConfig(t.TempDir(), sourceConfig("good", good), sourceConfig("pushed", pushed), broken)
	cfg.Queue.NodeName = "mirror-1"
	n := startNode(t, cfg, nil)
	mustSync(t, n, "good")
	mustSync(t, n, "pushed")
	failSync(t, n, "broken", "127.0.0.1:1")
	waitFor(t, 10*time.Second, "the hub to verify the subscription", func() bool { return hub.Subscribers() == 1 })
	pushed.Update(1)
	waitFor(t, 30*time.Second, "a notification from the pushing Source", func() bool {
		st, _ := n.roles.harv.SourceStatus(context.Background(), "pushed")
		return st.Push && !st.LastNotified.IsZero()
	})
	waitFor(t, 30*time.Second, "two samples of the rates", func() bool { return n.rateInfo().Known })
	waitSettled(t, n, 60*time.Second)

	dom := headless(t, bin, n.AdminURL()+"/", "--dump-dom")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<span id="node-name">mirror-1</span>`),
		regexp.MustCompile(`<span id="version">test</span>`),
		regexp.MustCompile(`id="readiness" class="ok">ready<`),
		regexp.MustCompile(`<tr class="source idle" data-source="good">\s*<td><b>good</b> <span class="mode poll">poll</span>.*@every 1h`),
		regexp.MustCompile(`(?s)data-source="pushed">\s*<td><b>pushed</b> <span class="mode push">push</span>.*?<td class="heard">notification \d+(\.\d)?s ago<br>`),
		regexp.MustCompile(`<tr class="source failing" data-source="broken">`),
		// The failing Source's error is one line, its root cause; the
		// whole error waits behind a click.
		regexp.MustCompile(`<summary>failing [^<]* ago: <span class="cause">dial tcp 127\.0\.0\.1:1: connection refused( after \d attempts)?</span></summary><pre>[^<]*no ResourceSync Source Description`),
		regexp.MustCompile(`id="nats" class="ok">connected<`),
		regexp.MustCompile(`id="blobs" class="ok">reachable<`),
		regexp.MustCompile(`id="catalog" class="num">17 resources`),
		regexp.MustCompile(`id="rates" class="num">\d+\.\d resources/s, \d+(\.\d)? [KMG]?i?B/s<`),
		regexp.MustCompile(`data-disk="data directory"><th>free space: data directory</th><td class="num (ok|bad)">[\d.]+ [KMGT]i?B free of [\d.]+ [KMGTP]i?B \(\d+%\)</td><td>&lt;data_dir&gt;</td>`),
		regexp.MustCompile(`data-disk="blob store">.*free of.*&lt;data_dir&gt;/blobs`),
		regexp.MustCompile(`data-stream="CHANGES"><th>stream CHANGES</th><td class="num">0 messages<`),
		regexp.MustCompile(`0 events behind`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("the page as the browser built it lacks %s", want)
		}
	}
	if strings.Contains(dom, "1 messages") || strings.Contains(dom, "1 resources") {
		t.Error("the page writes a plural after 1")
	}
	if !strings.Contains(dom, `http-equiv="refresh"`) {
		t.Error("the page does not refresh itself")
	}
	if t.Failed() {
		t.Logf("page:\n%s", dom)
	}

	if *updateScreenshot {
		shot := filepath.Join(t.TempDir(), "status.png")
		headless(t, bin, n.AdminURL()+"/", "--screenshot="+shot)
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../docs/status-page.png", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
