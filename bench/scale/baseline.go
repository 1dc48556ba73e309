package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// baselineCmd harvests one Source into a fresh node and samples it on the
// way: whether the rate stays flat and the memory bounded as the catalog
// grows.
func baselineCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	viaduct := fs.String("viaduct", "viaduct", "viaduct binary")
	source := fs.String("source", "http://127.0.0.1:18281/", "the static Source's URL")
	n := fs.Int("n", 1_000_000, "resources the Source holds")
	work := fs.String("work", "", "directory for the node's data (DIR/node), config, log and baseline.csv; must not hold a node already")
	every := fs.Duration("every", 10*time.Second, "how often a sample is taken")
	profileAt := fs.String("profile-at", "", "fractions of n (such as 0.1,0.9) at which to take a CPU profile from the node's pprof, into DIR/cpu-FRACTION.pprof")
	profileFor := fs.Duration("profile-for", 20*time.Second, "length of each CPU profile")
	politeness := fs.Bool("lift-politeness", true, "lift per_host_rate and set per_host_concurrency 64, as bench/compare does")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *work == "" || fs.NArg() > 0 {
		return errors.New("baseline: -work is required and takes no arguments")
	}
	data := filepath.Join(*work, "node")
	if _, err := os.Stat(data); err == nil {
		return fmt.Errorf("baseline: %s exists: start from a fresh -work", data)
	}
	if err := os.MkdirAll(*work, 0o755); err != nil {
		return err
	}
	extra := ""
	if *politeness {
		extra = "upstream:\n  allow_loopback: true\n  per_host_rate: 1000000\n  per_host_concurrency: 64\n"
	}
	var fractions []float64
	for _, f := range strings.Split(*profileAt, ",") {
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 || v >= 1 {
			return fmt.Errorf("baseline: -profile-at %q: fractions between 0 and 1", f)
		}
		fractions = append(fractions, v)
	}
	out, err := os.Create(filepath.Join(*work, "baseline.csv"))
	if err != nil {
		return err
	}
	defer out.Close()
	w := csv.NewWriter(io.MultiWriter(out, os.Stdout))
	w.Write([]string{"seconds", "resources", "rate_interval", "rss_mb", "peak_rss_mb", "cpu_s", "cpu_us_per_resource_interval", "go_heap_inuse_mb", "go_next_gc_mb", "load1"})
	w.Flush()

	startLoad := loadavg()
	begin := time.Now()
	nd, err := startNode(ctx, *viaduct, *work, "baseline", data, extra, []string{*source})
	if err != nil {
		return err
	}
	defer nd.stop()
	var samples []sample
	last := sample{}
	nextSample := *every
	var peakRSS int64
	profiled := make([]bool, len(fractions))
	profiles := make(chan error, len(fractions))
	taken := 0
	// A catalog that holds nothing new for stallAfter ends the run: a
	// Source serving fewer resources than -n (another server on its
	// port, a list generated with another -n) would otherwise be
	// waited on for ever.
	var lastHeld int64 = -1
	moved := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-nd.exited:
			nd.exited <- err
			return fmt.Errorf("viaduct exited before the catalog was complete (%v; log: %s)", err, nd.log)
		case <-tick.C:
		}
		held, ok := nd.resources()
		if !ok {
			continue
		}
		if held != lastHeld {
			lastHeld, moved = held, time.Now()
		} else if time.Since(moved) > stallAfter {
			return fmt.Errorf("viaduct stalled at %d of %d resources: nothing new in the catalog for %s (is the Source at %s serving %d? log: %s)",
				held, *n, stallAfter, *source, *n, nd.log)
		}
		t := time.Since(begin).Seconds()
		for i, f := range fractions {
			if !profiled[i] && held >= int64(f*float64(*n)) {
				profiled[i] = true
				taken++
				go func(f float64) {
					profiles <- fetchTo(filepath.Join(*work, fmt.Sprintf("cpu-%g.pprof", f)),
						fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", nd.admin, int(profileFor.Seconds())))
				}(f)
			}
		}
		done := held >= int64(*n)
		if t < nextSample.Seconds() && !done {
			continue
		}
		nextSample += *every
		rss, hwm := nd.status()
		peakRSS = max(peakRSS, hwm)
		u, s := nd.cpu()
		gm := metrics(nd.metricsURL(), "go_memstats_heap_inuse_bytes", "go_memstats_next_gc_bytes")
		cur := sample{t: t, cpu: u + s, held: held, rss: rss}
		rate, cpuPer := 0.0, 0.0
		if d := cur.held - last.held; d > 0 {
			rate = float64(d) / (cur.t - last.t)
			cpuPer = (cur.cpu - last.cpu) * 1e6 / float64(d)
		}
		w.Write([]string{f1(t), strconv.FormatInt(held, 10), f0(rate), f0(float64(rss) / 1024), f0(float64(hwm) / 1024),
			f1(cur.cpu), f0(cpuPer), f0(gm["go_memstats_heap_inuse_bytes"] / 1e6), f0(gm["go_memstats_next_gc_bytes"] / 1e6), loadavg()})
		w.Flush()
		samples = append(samples, cur)
		last = cur
		if done {
			break
		}
	}
	wall := time.Since(begin).Seconds()
	// The heap as it ends, for what holds the memory.
	heapErr := fetchTo(filepath.Join(*work, "heap.pprof"), "http://"+nd.admin+"/debug/pprof/heap")
	for range taken {
		if err := <-profiles; err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
		}
	}
	if heapErr != nil {
		fmt.Fprintln(os.Stderr, "heap profile:", heapErr)
	}
	user, sys := nd.cpu()
	liveSizes := sizes(data)
	nd.stop()
	stoppedSizes := sizes(data)

	first, lastRate := intervalRates(samples)
	fmt.Printf("\n%d resources in %.1f s (%.0f/s), load %s at start, %s at end\n", *n, wall, float64(*n)/wall, startLoad, loadavg())
	fmt.Printf("rate per interval: first %s, last %s; min %s, max %s (after the first interval)\n",
		f0(first), f0(lastRate), f0(minRate(samples)), f0(maxRate(samples)))
	if a, b, ok := fifthRates(samples); ok {
		fmt.Printf("rate over the first fifth %s, over the last fifth %s: %.2fx\n", f0(a), f0(b), b/a)
	}
	fmt.Printf("peak RSS %.0f MB; RSS at the end %.0f MB\n", float64(peakRSS)/1024, float64(samples[len(samples)-1].rss)/1024)
	fmt.Printf("CPU %.1f s (%.0f s system): %.0f µs a resource\n", user+sys, sys, (user+sys)*1e6/float64(*n))
	for _, s := range []struct {
		when string
		sz   map[string]int64
	}{{"at the end, live", liveSizes}, {"after shutdown", stoppedSizes}} {
		fmt.Printf("on disk %s:", s.when)
		for _, k := range []string{"catalog", "catalog-wal", "events", "jetstream", "blobs"} {
			fmt.Printf(" %s %.0f MB (%.0f B/resource);", k, float64(s.sz[k])/1e6, float64(s.sz[k])/float64(*n))
		}
		fmt.Println()
	}
	return nil
}

// sample is the node at one moment of a baseline: seconds since its
// start, CPU seconds, resources held, resident KiB.
type sample struct {
	t, cpu float64
	held   int64
	rss    int64
}

// sizes is what each part of a node's data directory takes on disk: the
// catalog file and its WAL, the EVENTS stream, all of JetStream, the blobs.
func sizes(data string) map[string]int64 {
	m := map[string]int64{}
	m["catalog"], _ = treeBytes(filepath.Join(data, "catalog.db"))
	wal, _ := treeBytes(filepath.Join(data, "catalog.db-wal"))
	shm, _ := treeBytes(filepath.Join(data, "catalog.db-shm"))
	m["catalog-wal"] = wal + shm
	m["jetstream"], _ = treeBytes(filepath.Join(data, "jetstream"))
	m["blobs"], _ = treeBytes(filepath.Join(data, "blobs"))
	filepath.WalkDir(filepath.Join(data, "jetstream"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "EVENTS" {
			b, _ := treeBytes(p)
			m["events"] += b
			return filepath.SkipDir
		}
		return nil
	})
	return m
}

// stallAfter is how long a baseline may add nothing to the catalog before
// the run is given up; a node's start and its first pass take seconds.
const stallAfter = 2 * time.Minute

// intervalRates is the rate of the first interval that stored anything
// and of the last one.
func intervalRates(s []sample) (first, last float64) {
	return rateAt(s, firstMoving(s)), rateAt(s, len(s)-1)
}

// fifthRates are the rates over the first fifth of the resources (from
// the start, as a user waits for them) and over the last fifth, each
// bound read between samples as if the rate were steady between them:
// the last interval alone is cut short by the end and says little.
func fifthRates(s []sample) (first, last float64, ok bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	end := s[len(s)-1]
	n := float64(end.held)
	t1, t4 := timeAt(s, n/5), timeAt(s, 4*n/5)
	if t1 <= 0 || end.t <= t4 {
		return 0, 0, false
	}
	return n / 5 / t1, n / 5 / (end.t - t4), true
}

// timeAt is when the samples reached held resources, between the two
// samples around it.
func timeAt(s []sample, held float64) float64 {
	prevT, prevH := 0.0, 0.0
	for _, x := range s {
		if h := float64(x.held); h >= held {
			if h == prevH {
				return x.t
			}
			return prevT + (x.t-prevT)*(held-prevH)/(h-prevH)
		}
		prevT, prevH = x.t, float64(x.held)
	}
	return s[len(s)-1].t
}

func firstMoving(s []sample) int {
	for i := range s {
		if s[i].held > 0 {
			return i
		}
	}
	return len(s) - 1
}

func rateAt(s []sample, i int) float64 {
	if i <= 0 || i >= len(s) {
		if i == 0 && len(s) > 0 && s[0].t > 0 {
			return float64(s[0].held) / s[0].t
		}
		return 0
	}
	return float64(s[i].held-s[i-1].held) / (s[i].t - s[i-1].t)
}

// minRate and maxRate leave out the first interval (the start-up) and the
// last (cut short by the end).
func minRate(s []sample) float64 {
	m := 0.0
	for i := firstMoving(s) + 1; i < len(s)-1; i++ {
		if r := rateAt(s, i); m == 0 || r < m {
			m = r
		}
	}
	return m
}

func maxRate(s []sample) float64 {
	m := 0.0
	for i := firstMoving(s) + 1; i < len(s)-1; i++ {
		m = max(m, rateAt(s, i))
	}
	return m
}

// fetchTo saves what url answers into path.
func fetchTo(path, url string) error {
	c := http.Client{Timeout: 5 * time.Minute}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func f0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
