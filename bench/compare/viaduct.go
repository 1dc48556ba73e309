package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runViaduct starts `viaduct serve` on a fresh data directory harvesting
// the Source, and waits until its catalog holds o.N resources. Time runs
// from the process's start; the samples of the catalog's size on the way
// show how fast it ramps up.
func runViaduct(ctx context.Context, o options, dir string, r *result) error {
	pub, err := freePort()
	if err != nil {
		return err
	}
	admin, err := freePort()
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(dir, "viaduct.yaml")
	if err := os.WriteFile(cfgPath, []byte(viaductConfig(o, dir, pub, admin, r.Round)), 0o600); err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(o.Work, r.Contender+"-"+roundLabel(r.Round)+".log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, o.Viaduct, "serve", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
	metrics := []string{"http://" + admin + "/metrics", "http://" + pub + "/metrics"}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case err := <-exited:
			return fmt.Errorf("viaduct exited before the catalog was complete (%v; log: %s)", err, log.Name())
		case <-tick.C:
		}
		held, ok := catalogResources(metrics)
		if ok {
			r.sample(since(start), held)
		}
		if held >= int64(o.N) {
			break
		}
		if time.Since(start) > time.Hour {
			stop()
			return fmt.Errorf("viaduct stalled at %d of %d resources (log: %s)", held, o.N, log.Name())
		}
	}
	r.Seconds = since(start)
	r.PeakKB = peakRSS(cmd.Process.Pid)
	stop()
	r.CPU, r.SysCPU = cpuTime(cmd.ProcessState)
	r.Stored = int64(o.N)
	return nil
}

// viaductConfig is the configuration every round runs with: viaduct's
// defaults but for the politeness limits, lifted as for a Source that
// allows a mirror to take what it can (the reference client has none).
func viaductConfig(o options, dir, pub, admin string, round int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data_dir: %s\nlisten: %s\n", filepath.Join(dir, "data"), pub)
	fmt.Fprintf(&b, "admin:\n  listen: %s\n  allow_no_token_on_loopback: true\n", admin)
	b.WriteString("log:\n  level: warn\n")
	b.WriteString("upstream:\n  allow_loopback: true\n  per_host_rate: 1000000\n  per_host_concurrency: 64\n")
	if o.Workers > 0 {
		fmt.Fprintf(&b, "fetch:\n  workers: %d\n", o.Workers)
	}
	if o.EventsCompression != "" {
		fmt.Fprintf(&b, "queue:\n  events_compression: %s\n", o.EventsCompression)
	}
	if o.Blobs == "s3" {
		fmt.Fprintf(&b, "blobs:\n  kind: s3\n  s3:\n    endpoint: %s\n    bucket: bench-%s-%d\n    access_key: %s\n    secret_key: %s\n    tls: false\n    create_bucket: true\n",
			o.S3Endpoint, roundLabel(round), time.Now().Unix(), o.S3Key, o.S3Secret)
	}
	// The default schedule: a Source never harvested gets its first pass
	// at start-up.
	fmt.Fprintf(&b, "sources:\n  - name: bench\n    url: %s\n    allow_loopback: true\n", o.SourceURL)
	return b.String()
}

// catalogResources reads viaduct_catalog_resources from the first metrics
// URL that answers.
func catalogResources(urls []string) (int64, bool) {
	c := http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		resp, err := c.Get(u)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "viaduct_catalog_resources "); ok {
				resp.Body.Close()
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				return int64(f), err == nil
			}
		}
		resp.Body.Close()
	}
	return 0, false
}

// peakRSS is a live process's VmHWM, in KiB.
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
