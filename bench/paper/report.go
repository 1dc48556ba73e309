package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// outcome is one experiment's figures at the two Destinations: A reads
// the Source, B reads A.
type outcome struct {
	experiment
	A, B metrics
	// Failed says why the run measured nothing.
	Failed string
}

func (o outcome) short() string {
	if o.Failed != "" {
		return o.Failed
	}
	return fmt.Sprintf("A: %.3f %v %.2f | B: %.3f %v %.2f", o.A.Consistency, o.A.Latency.Round(time.Millisecond), o.A.Efficiency,
		o.B.Consistency, o.B.Latency.Round(time.Millisecond), o.B.Efficiency)
}

// writeReport writes results.md (a table of every experiment) and one
// SVG per metric, laid out as the paper's figures 2 to 4.
func writeReport(dir string, m matrix, res []outcome) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Intervals are the paper's; this run scaled them by %g. A is viaduct reading the Source; B is a second viaduct reading A.\n\n", m.Scale)
	b.WriteString("| mode | resources | change every | sync every | A consistency | A latency | A efficiency | B consistency | B latency | B efficiency | unsynced at end (A/B) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, o := range res {
		sync := syncColumn(o)
		if o.Failed != "" {
			fmt.Fprintf(&b, "| %s | %d | %v | %s | %s |||||||\n", o.Mode, o.Size, o.ChangeInterval, sync, o.Failed)
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %v | %s | %.3f | %s | %.3f | %.3f | %s | %.3f | %d/%d |\n", o.Mode, o.Size, o.ChangeInterval, sync,
			o.A.Consistency, latency(o.A, m.Scale), o.A.Efficiency, o.B.Consistency, latency(o.B, m.Scale), o.B.Efficiency,
			o.A.Unsynced, o.B.Unsynced)
	}
	b.WriteString("\nLatencies are given in the paper's time (measured time divided by the scale).\n")
	b.WriteString("\nWhere the bytes went: required are the bytes of the changed resources' last versions; transferred, every response body the Destination read, and of that the ResourceSync documents' (the rest are bitstreams).\n\n")
	b.WriteString("| mode | resources | change every | sync every | A required | A transferred | A documents | B required | B transferred | B documents |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, o := range res {
		if o.Failed != "" {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %v | %s | %d | %d | %d | %d | %d | %d |\n", o.Mode, o.Size, o.ChangeInterval, syncColumn(o),
			o.A.Required, o.A.Transferred, o.A.Documents, o.B.Required, o.B.Transferred, o.B.Documents)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.md"), b.Bytes(), 0o644); err != nil {
		return err
	}
	plots := []struct {
		file, title string
		value       func(metrics) float64
		max         float64
	}{
		{"consistency.svg", "Average consistency", func(x metrics) float64 { return x.Consistency }, 1},
		{"latency.svg", "Average latency (s, paper time)", func(x metrics) float64 { return x.Latency.Seconds() / m.Scale }, 0},
		{"efficiency.svg", "Data transfer efficiency", func(x metrics) float64 { return x.Efficiency }, 1},
	}
	for _, p := range plots {
		svg := plotGrid(m, res, p.title, p.value, p.max)
		if err := os.WriteFile(filepath.Join(dir, p.file), svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// syncColumn is how the Destinations synchronised: their poll interval,
// or push.
func syncColumn(o outcome) string {
	if o.Mode == "push" {
		return "push"
	}
	return o.SyncInterval.String()
}

// latency is the average latency in the paper's time, or a dash when no
// change got in sync during the run.
func latency(x metrics, scale float64) string {
	if x.Settled == 0 {
		return "–"
	}
	return paperTime(x.Latency, scale).String()
}

// paperTime turns a measured duration back into the paper's time.
func paperTime(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) / scale).Round(10 * time.Millisecond)
}
