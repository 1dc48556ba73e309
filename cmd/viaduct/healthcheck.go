package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/viaduct-mirror/viaduct/node"
)

// runHealthcheck asks a node's public listener for /readyz and exits 0
// when it is ready, 1 when it is not or does not answer. It is the
// container image's health check: the distroless image has no shell,
// curl or wget to ask with.
//
// It reads only `listen` of the configuration, so that a node that
// started on a file is judged by its answers, not by the rest of the
// file.
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("healthcheck", "[--config FILE | --addr HOST:PORT] [--timeout D]", stderr)
	path := fs.String("config", "", "the node's YAML configuration `file`: probe its listen address")
	addr := fs.String("addr", "", "the `host:port` to probe instead of the configuration's listen address")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (healthcheck takes only flags)", errUsage, fs.Arg(0))
	}
	if (*path == "") == (*addr == "") {
		return fmt.Errorf("%w: give --config FILE or --addr HOST:PORT", errUsage)
	}
	if *path != "" {
		l, err := listenOf(*path)
		if err != nil {
			return err
		}
		*addr = l
	}
	target, err := probeAddr(*addr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	url := "http://" + target + "/readyz"
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	status, body, err := getReadyz(ctx, url)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: not ready: %d %s", url, status, body)
	}
	fmt.Fprintf(stdout, "%s: ready\n", url)
	return nil
}

// listenOf is the listen address a configuration file gives, or the
// default one when it gives none.
func listenOf(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading config: %w", err)
	}
	var cfg struct {
		Listen string `yaml:"listen"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("config %s: %w", path, err)
	}
	if cfg.Listen == "" {
		return node.Defaults().Listen, nil
	}
	return cfg.Listen, nil
}

// probeAddr is the address to connect to for a listen address: a node
// listening on every address (":8080", "0.0.0.0:8080", "[::]:8080") is
// asked on loopback, from inside its own container or machine.
func probeAddr(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("address %q is not host:port: %v", listen, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}

// getReadyz makes one GET, with no proxy (the node is local) and no
// connection kept, and returns the status and the first line of the body.
func getReadyz(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return resp.StatusCode, line, nil
}
