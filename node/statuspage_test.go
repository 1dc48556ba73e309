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

// TestStatusPageInABrowser loads the status page of a node with one
// healthy and one failing Source in a real headless browser and checks
// what it shows.
func TestStatusPageInABrowser(t *testing.T) {
	bin := chromium(t)
	good := startSource(t, sim.Config{Resources: 12, Seed: 71})
	yes := true
	broken := harvester.SourceConfig{Name: "broken", URL: "http://127.0.0.1:1/", Schedule: "@every 1h", AllowLoopback: &yes}
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("good", good), broken), nil)
	mustSync(t, n, "good")
	failSync(t, n, "broken", "127.0.0.1:1")
	waitSettled(t, n, 60*time.Second)

	dom := headless(t, bin, n.AdminURL()+"/", "--dump-dom")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<span id="version">test</span>`),
		regexp.MustCompile(`id="readiness" class="ok">ready<`),
		regexp.MustCompile(`<tr class="source idle" data-source="good">`),
		regexp.MustCompile(`<tr class="source failing" data-source="broken">`),
		regexp.MustCompile(`last error [^<]* ago: [^<]*127\.0\.0\.1:1`),
		regexp.MustCompile(`id="nats" class="ok">connected<`),
		regexp.MustCompile(`id="blobs" class="ok">reachable<`),
		regexp.MustCompile(`id="catalog" class="num">12 resources`),
		regexp.MustCompile(`data-stream="CHANGES"`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("the page as the browser built it lacks %s", want)
		}
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
