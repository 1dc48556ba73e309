package node

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/sim"
)

// adminCall sends one admin request with token (empty: none) and returns
// the status and body.
func adminCall(t testing.TB, method, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tokenConfig is a test node whose admin listener needs the token in a
// file.
func tokenConfig(t *testing.T, token string, src *sim.Server) Config {
	cfg := testConfig(t.TempDir(), sourceConfig("s", src))
	cfg.Admin.AllowNoTokenOnLoopback = false
	cfg.Admin.TokenFile = filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(cfg.Admin.TokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAdminNeedsItsToken: the admin API refuses a request without the
// token and one with the wrong token, saying why; the public listener has
// no admin paths at all, token or not; the health probes need none.
func TestAdminNeedsItsToken(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 3, Seed: 2})
	const token = "s3cret-admin-token"
	n := startNode(t, tokenConfig(t, token, src), nil)

	for _, c := range []struct {
		name, token string
		code        int
		says        string
	}{
		{"no token", "", http.StatusUnauthorized, "no admin token: send the header Authorization: Bearer"},
		{"wrong token", "not-the-token", http.StatusUnauthorized, "does not match"},
		{"right token", token, http.StatusOK, `"name": "s"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := adminCall(t, "GET", n.AdminURL()+"/admin/sources", c.token)
			if code != c.code || !strings.Contains(body, c.says) {
				t.Errorf("GET /admin/sources with %s: %d %s, want %d saying %q", c.name, code, body, c.code, c.says)
			}
			code, body = adminCall(t, "POST", n.AdminURL()+"/admin/sources/s/sync", c.token)
			if c.code == http.StatusOK {
				c.code = http.StatusAccepted
			}
			if code != c.code {
				t.Errorf("POST sync with %s: %d %s, want %d", c.name, code, body, c.code)
			}
		})
	}
	t.Run("token on the public listener", func(t *testing.T) {
		for _, p := range []string{"/admin/sources", "/admin/sources/s/sync", "/metrics", "/debug/pprof/", "/admin/deadletters"} {
			for _, m := range []string{"GET", "POST"} {
				if code, body := adminCall(t, m, n.URL()+p, token); code != http.StatusNotFound && code != http.StatusMethodNotAllowed {
					t.Errorf("%s %s on the public listener: %d %s, want 404", m, p, code, body)
				}
			}
		}
	})
	t.Run("probes need no token", func(t *testing.T) {
		if code, body := adminCall(t, "GET", n.AdminURL()+"/livez", ""); code != http.StatusOK {
			t.Errorf("/livez: %d %s", code, body)
		}
		waitFor(t, 20*time.Second, "/readyz to answer ready", func() bool {
			code, _ := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
			return code == http.StatusOK
		})
	})
	t.Run("metrics and pprof with the token", func(t *testing.T) {
		if code, body := adminCall(t, "GET", n.AdminURL()+"/metrics", token); code != http.StatusOK || !strings.Contains(body, "viaduct_catalog_resources") {
			t.Errorf("/metrics: %d", code)
		}
		if code, _ := adminCall(t, "GET", n.AdminURL()+"/debug/pprof/cmdline", token); code != http.StatusOK {
			t.Errorf("/debug/pprof/cmdline: %d", code)
		}
	})
}

// TestReadyzFlipsWhenDraining: /readyz answers 503 naming the draining
// condition from the moment the node starts to drain, while /livez and
// the public listener still answer.
func TestReadyzFlipsWhenDraining(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 3, Seed: 4})
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("s", src)), nil)
	waitFor(t, 20*time.Second, "/readyz to answer ready", func() bool {
		code, _ := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
		return code == http.StatusOK
	})
	n.Drain()
	code, body := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
	var r struct {
		Ready      bool
		Conditions []Condition
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || code != http.StatusServiceUnavailable || r.Ready {
		t.Fatalf("/readyz while draining: %d %s", code, body)
	}
	found := false
	for _, c := range r.Conditions {
		found = found || c.Name == "draining" && !c.Ready && c.Reason != ""
	}
	if !found {
		t.Errorf("/readyz while draining does not name the draining condition: %s", body)
	}
	if code, _ := adminCall(t, "GET", n.AdminURL()+"/livez", ""); code != http.StatusOK {
		t.Errorf("/livez while draining: %d", code)
	}
	if code, _ := adminCall(t, "GET", n.URL()+"/.well-known/resourcesync", ""); code != http.StatusOK {
		t.Errorf("public Source Description while draining: %d", code)
	}
}

// TestReadinessConditionsFromRoles: a condition a role sets makes the node
// not ready, with its reason, until it is cleared.
func TestReadinessConditionsFromRoles(t *testing.T) {
	src := startSource(t, sim.Config{Resources: 3, Seed: 4})
	n := startNode(t, testConfig(t.TempDir(), sourceConfig("s", src)), nil)
	n.Readiness().Set("fetch", false, "blob store write failed: disk full")
	code, body := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "disk full") {
		t.Fatalf("/readyz with a failed role: %d %s", code, body)
	}
	n.Readiness().Set("fetch", true, "")
	waitFor(t, 20*time.Second, "/readyz to answer ready again", func() bool {
		code, _ := adminCall(t, "GET", n.AdminURL()+"/readyz", "")
		return code == http.StatusOK
	})
}
