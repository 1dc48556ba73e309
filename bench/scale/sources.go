package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/bench/internal/ports"

	"github.com/viaduct-mirror/viaduct/upstream"
)

// sourcesCmd harvests count Sources at once, on consecutive ports from
// -first (each behind bench/delayproxy), with viaduct's default
// politeness, and compares the time with the bound the politeness sets;
// then runs resync-sync on the first few Sources one after another.
func sourcesCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sources", flag.ContinueOnError)
	viaduct := fs.String("viaduct", "viaduct", "viaduct binary")
	first := fs.String("first", "127.0.0.1:19100", "address of the first Source; the others on the next ports")
	count := fs.Int("count", 50, "Sources")
	n := fs.Int("n", 2000, "resources each Source holds")
	work := fs.String("work", "", "scratch directory (created): the node's data, config and log")
	resync := fs.String("resync", "", "directory of resync 2.0.1; empty: no reference run")
	resyncSources := fs.Int("resync-sources", 3, "Sources resync-sync harvests, one after another")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *work == "" || fs.NArg() > 0 {
		return errors.New("sources: -work is required and takes no arguments")
	}
	if err := os.MkdirAll(*work, 0o755); err != nil {
		return err
	}
	var urls []string
	for i := range *count {
		a, err := ports.Plus(*first, i)
		if err != nil {
			return err
		}
		urls = append(urls, "http://"+a+"/")
	}
	def := upstream.DefaultConfig()
	// Each Source: its Source Description, Capability List and Resource
	// List, then every bitstream, at per_host_rate after a burst.
	requests := *n + 3
	bound := float64(requests-def.PerHostBurst) / def.PerHostRate
	fmt.Printf("%d Sources x %d resources; politeness defaults per_host_rate %g/s, per_host_burst %d, per_host_concurrency %d: bound %.1f s; load %s\n",
		*count, *n, def.PerHostRate, def.PerHostBurst, def.PerHostConcurrency, bound, loadavg())

	data := filepath.Join(*work, "node")
	os.RemoveAll(data)
	begin := time.Now()
	nd, err := startNode(ctx, *viaduct, *work, "sources", data, "", urls)
	if err != nil {
		return err
	}
	defer nd.stop()
	done := map[string]float64{}
	total := int64(*count) * int64(*n)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-nd.exited:
			nd.exited <- err
			return fmt.Errorf("viaduct exited (%v; log: %s)", err, nd.log)
		case <-time.After(250 * time.Millisecond):
		}
		t := time.Since(begin).Seconds()
		for src, v := range handled(nd.metricsURL()) {
			if _, ok := done[src]; !ok && v >= float64(*n) {
				done[src] = t
			}
		}
		held, ok := nd.resources()
		if ok && held >= total && len(done) == *count {
			break
		}
		if time.Since(begin) > time.Hour {
			return fmt.Errorf("viaduct stalled at %d of %d resources (log: %s)", held, total, nd.log)
		}
	}
	wall := time.Since(begin).Seconds()
	user, sys := nd.cpu()
	_, hwm := nd.status()
	nd.stop()
	var ends []float64
	for _, t := range done {
		ends = append(ends, t)
	}
	sort.Float64s(ends)
	fmt.Printf("viaduct: %d resources of %d Sources in %.1f s (%.2fx the bound); each Source done between %.1f and %.1f s (median %.1f); CPU %.1f s; peak %.0f MB; load %s\n",
		total, *count, wall, wall/bound, ends[0], ends[len(ends)-1], ends[len(ends)/2], user+sys, float64(hwm)/1024, loadavg())

	if *resync == "" || *resyncSources < 1 {
		return nil
	}
	var sum float64
	k := min(*resyncSources, *count)
	for i := range k {
		dir := filepath.Join(*work, fmt.Sprintf("resync-%02d", i))
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, "/usr/bin/python3", filepath.Join(*resync, "resync-sync"), "--baseline", urls[i], filepath.Join(dir, "dest"))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PYTHONPATH="+*resync)
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("resync-sync %s: %w: %s", urls[i], err, lastLine(out))
		}
		secs := time.Since(start).Seconds()
		_, stored := treeBytes(filepath.Join(dir, "dest"))
		if stored != int64(*n) {
			return fmt.Errorf("resync-sync %s stored %d of %d", urls[i], stored, *n)
		}
		u, s := cmd.ProcessState.UserTime(), cmd.ProcessState.SystemTime()
		fmt.Printf("resync-sync %s: %.1f s, CPU %.1f s, load %s\n", urls[i], secs, (u + s).Seconds(), loadavg())
		sum += secs
	}
	fmt.Printf("resync-sync, one Source after another: %.1f s for %d Sources, %.0f s extrapolated to %d (%.1fx viaduct's %.1f s)\n",
		sum, k, sum/float64(k)*float64(*count), *count, sum/float64(k)*float64(*count)/wall, wall)
	return nil
}

// handled reads viaduct_fetch_handled_total per source.
func handled(url string) map[string]float64 {
	m := map[string]float64{}
	scrape(url, func(series string, v float64) {
		if rest, ok := strings.CutPrefix(series, `viaduct_fetch_handled_total{source="`); ok {
			if src, ok := strings.CutSuffix(rest, `"}`); ok {
				m[src] = v
			}
		}
	})
	return m
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}
