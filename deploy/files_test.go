package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/viaduct-mirror/viaduct/node"
)

// readFile reads a file of deploy/ by its path relative to it.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b
}

// decodeYAML decodes every document of a YAML file into a new T each,
// refusing fields that T does not name only when strict is set.
func decodeYAML[T any](t *testing.T, name string, strict bool) []T {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, name)))
	dec.KnownFields(strict)
	var docs []T
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: document %d: %v", name, len(docs)+1, err)
		}
		docs = append(docs, v)
	}
}

// checkViaductConfig runs on a viaduct configuration the checks that
// `viaduct serve --check` runs, in the environment the deployment gives
// the process, and returns the configuration they produced. what names
// it in failures.
func checkViaductConfig(t *testing.T, what string, data []byte, env map[string]string) node.Config {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	// A file of deploy/ is loaded where it is, so errors name it.
	path := filepath.FromSlash(what)
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, data) {
		path = filepath.Join(t.TempDir(), "viaduct.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := node.Load(path)
	if err == nil {
		err = node.CheckStart(context.Background(), cfg)
	}
	if err != nil {
		t.Fatalf("%s does not pass viaduct serve --check: %v", what, err)
	}
	return cfg
}

// hostPort splits a host:port, failing the test when it is not one.
func hostPort(t *testing.T, what, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s: %q is not host:port: %v", what, addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%s: port of %q: %v", what, addr, err)
	}
	return h, n
}

// urlHostPort is the host and port of a URL, the scheme's default port
// when it names none.
func urlHostPort(t *testing.T, what, raw string) (string, int) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %q: %v", what, raw, err)
	}
	if u.Port() == "" {
		switch u.Scheme {
		case "http":
			return u.Hostname(), 80
		case "https":
			return u.Hostname(), 443
		}
		t.Fatalf("%s: %q names no port", what, raw)
	}
	return hostPort(t, what, u.Host)
}

// natsURLs splits queue.url into its servers' hosts and ports.
func natsURLs(t *testing.T, raw string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, s := range strings.Split(raw, ",") {
		h, p := urlHostPort(t, "queue.url", strings.TrimSpace(s))
		out[h] = p
	}
	return out
}

// sameSet fails the test unless got and want hold the same strings.
func sameSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	g, w := map[string]bool{}, map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	for _, s := range want {
		w[s] = true
	}
	for s := range w {
		if !g[s] {
			t.Errorf("%s: %q missing (have %q, want %q)", what, s, got, want)
		}
	}
	for s := range g {
		if !w[s] {
			t.Errorf("%s: %q not expected (have %q, want %q)", what, s, got, want)
		}
	}
}

// configFile is a viaduct configuration that passed the checks, with the
// file it came from.
type configFile struct {
	file string
	node.Config
}
