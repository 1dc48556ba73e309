package main

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is a child process the benchmark started and reads from outside.
type proc struct {
	cmd    *exec.Cmd
	exited chan error
	log    string
	// stopped makes stop safe to call again (a deferred stop after an
	// explicit one): the process is waited for once.
	stopped sync.Once
}

// start runs name with args, its output going to logPath.
func start(ctx context.Context, logPath, name string, args ...string) (*proc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, exited: make(chan error, 1), log: logPath}
	go func() {
		p.exited <- cmd.Wait()
		log.Close()
	}()
	return p, nil
}

// stop sends SIGTERM and waits for the process to end; later calls do
// nothing.
func (p *proc) stop() {
	p.stopped.Do(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(2 * time.Minute):
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// status reads VmRSS and VmHWM of a live process, in KiB.
func (p *proc) status() (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kib(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = kib(v)
		}
	}
	return rss, hwm
}

func kib(v string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
	return n
}

// cpu is a live process's user and system time so far, in seconds
// (/proc/PID/stat, in clock ticks of 1/100 s).
func (p *proc) cpu() (user, sys float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0, 0
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0, 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return u / 100, k / 100
}

// waitHTTP waits until url answers, or the process ends, or a minute.
func (p *proc) waitHTTP(ctx context.Context, url string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.exited:
			p.exited <- err
			return fmt.Errorf("%s exited (%v; log: %s)", p.cmd.Path, err, p.log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		c := http.Client{Timeout: 2 * time.Second}
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			return nil
		}
	}
	return fmt.Errorf("%s did not answer within a minute (log: %s)", url, p.log)
}

// metric reads one unlabelled gauge or counter from a Prometheus text page.
func metric(url, name string) (float64, bool) {
	m := metrics(url, name)
	v, ok := m[name]
	return v, ok
}

// metrics reads unlabelled gauges and counters from a Prometheus text
// page; those it did not find are missing from the map.
func metrics(url string, names ...string) map[string]float64 {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	m := map[string]float64{}
	scrape(url, func(series string, v float64) {
		if want[series] {
			m[series] = v
		}
	})
	return m
}

// scrape reads a Prometheus text page and calls fn with each sample's
// series, its name and labels as written, and its value. A page that
// cannot be read gives no samples.
func scrape(url string, fn func(series string, v float64)) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			fn(line[:i], v)
		}
	}
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// treeBytes is the space the files under root take on the disk (their
// allocated blocks), and their number.
func treeBytes(root string) (bytes, files int64) {
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				bytes += st.Blocks * 512
			} else {
				bytes += info.Size()
			}
			files++
		}
		return nil
	})
	return bytes, files
}

// loadavg is the first figure of /proc/loadavg: how busy the machine was.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// nodeConfig is the configuration of a node the benchmarks start:
// viaduct's defaults, loopback allowed, logs at warn, and extra (YAML of
// whole top-level sections) after.
func nodeConfig(data, pub, admin, extra string, sources []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "data_dir: %s\nlisten: %s\n", data, pub)
	fmt.Fprintf(&b, "admin:\n  listen: %s\n  allow_no_token_on_loopback: true\n", admin)
	b.WriteString("log:\n  level: warn\n")
	b.WriteString(extra)
	b.WriteString("sources:\n")
	for i, s := range sources {
		name := "bench"
		if len(sources) > 1 {
			name = fmt.Sprintf("s%02d", i)
		}
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    allow_loopback: true\n", name, s)
	}
	return b.String()
}

// node is a running `viaduct serve`.
type node struct {
	*proc
	pub, admin string
}

// startNode writes cfg (nodeConfig with fresh ports) to dir/name.yaml and
// starts viaduct on it, waiting until its /metrics answers.
func startNode(ctx context.Context, viaduct, dir, name, data, extra string, sources []string) (*node, error) {
	pub, err := freePort()
	if err != nil {
		return nil, err
	}
	admin, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, name+".yaml")
	if err := os.WriteFile(cfg, []byte(nodeConfig(data, pub, admin, extra, sources)), 0o600); err != nil {
		return nil, err
	}
	p, err := start(ctx, filepath.Join(dir, name+".log"), viaduct, "serve", "--config", cfg)
	if err != nil {
		return nil, err
	}
	n := &node{proc: p, pub: pub, admin: admin}
	if err := p.waitHTTP(ctx, n.metricsURL()); err != nil {
		p.stop()
		return nil, err
	}
	return n, nil
}

func (n *node) metricsURL() string { return "http://" + n.admin + "/metrics" }

// resources is the node's viaduct_catalog_resources.
func (n *node) resources() (int64, bool) {
	v, ok := metric(n.metricsURL(), "viaduct_catalog_resources")
	return int64(v), ok
}
