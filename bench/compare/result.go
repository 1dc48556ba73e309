package main

import (
	"fmt"
	"io"
	"strings"
)

// result is one contender's run in one round.
type result struct {
	Contender string
	Round     int
	Seconds   float64
	PeakKB    int64
	// CPU is the process's user and system time, SysCPU the system time
	// alone, in seconds.
	CPU, SysCPU float64
	Stored      int64
	// samples are (seconds since start, resources held) while viaduct ran.
	samples [][2]float64
}

func (r *result) sample(t float64, held int64) {
	r.samples = append(r.samples, [2]float64{t, float64(held)})
}

// rate is resources per second over the whole run.
func (r result) rate() float64 { return float64(r.Stored) / r.Seconds }

// cpuPer is the CPU time spent per resource, in µs: unlike the rate,
// it hardly moves when other processes share the machine.
func (r result) cpuPer() float64 { return r.CPU * 1e6 / float64(r.Stored) }

// mbps is bitstream bytes per second.
func (r result) mbps(size int64) float64 { return r.rate() * float64(size) / 1e6 }

// firstTimes says when the run first held 1 % and 50 % of its resources,
// and the rate between those moments: how fast it gets going, and how
// fast it runs once going.
func (r result) ramp(n int) string {
	if len(r.samples) == 0 {
		return ""
	}
	var t1, t50, h1, h50 float64
	for _, s := range r.samples {
		if t1 == 0 && s[1] >= float64(n)/100 {
			t1, h1 = s[0], s[1]
		}
		if t50 == 0 && s[1] >= float64(n)/2 {
			t50, h50 = s[0], s[1]
		}
	}
	if t50 <= t1 {
		return fmt.Sprintf("1%% at %.1f s", t1)
	}
	return fmt.Sprintf("1%% at %.1f s, %.0f/s from 1%% to 50%%", t1, (h50-h1)/(t50-t1))
}

func (r result) summary(o options) string {
	s := fmt.Sprintf("%.1f s, %.0f/s, %.1f MB/s, peak %.0f MB, %.0f CPU-µs/resource (%.0f%% system)",
		r.Seconds, r.rate(), r.mbps(o.Size), float64(r.PeakKB)/1024, r.cpuPer(), 100*r.SysCPU/r.CPU)
	if ramp := r.ramp(o.N); ramp != "" {
		s += ", " + ramp
	}
	return s
}

// printTable writes a Markdown table: each round's figures, and each
// contender's ratio to the first contender named in -with.
func printTable(w io.Writer, o options, results []result) {
	ref := o.Contenders[0]
	fmt.Fprintf(w, "%d resources x %d bytes, blobs %s, %d rounds\n\n", o.N, o.Size, o.Blobs, o.Rounds)
	fmt.Fprintf(w, "| round | contender | time | resources/s | MB/s | peak RSS | CPU-µs/resource | x %s | ramp |\n", ref)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		ratio := ""
		for _, b := range results {
			if b.Round == r.Round && b.Contender == ref {
				ratio = fmt.Sprintf("%.2fx", r.rate()/b.rate())
			}
		}
		fmt.Fprintf(w, "| %d | %s | %.1f s | %.0f | %.1f | %.0f MB | %.0f | %s | %s |\n", r.Round, r.Contender, r.Seconds, r.rate(),
			r.mbps(o.Size), float64(r.PeakKB)/1024, r.cpuPer(), ratio, strings.ReplaceAll(r.ramp(o.N), "|", "/"))
	}
}
