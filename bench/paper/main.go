// Command paper reproduces the experiments of the ResourceSync model and
// experiments paper (Klein, Haslhofer et al.; the text is in the project's
// spec papers) with viaduct as the Destination, and adds the aggregator's
// own view: the same metrics at a second viaduct that synchronises from
// the first through its republished Source and hub.
//
//	go run ./bench/paper -out docs/paper
//
// For every Source size, change interval, synchronisation interval and
// mode (baseline: Resource Lists only; incremental: Change Lists; push:
// Change Notification), it measures average consistency, average latency
// and data transfer efficiency, writes results.md and one SVG plot per
// metric into -out. Times are scaled by -scale (0.1: every interval ten
// times shorter) so the whole matrix fits a few minutes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// matrix is what one invocation runs.
type matrix struct {
	Sizes           []int
	ChangeIntervals []time.Duration // the paper's: 0.1 s and 10 s
	SyncIntervals   []time.Duration // the paper's: 10 s and 100 s
	Modes           []string
	Scale           float64
	Rounds          int // sync intervals measured per run
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "paper:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("paper", flag.ContinueOnError)
	out := fs.String("out", "docs/paper", "directory for results.md and the plots")
	sizes := fs.String("sizes", "100,1000", "Source sizes (the paper: 100,1000,10000,25000,50000)")
	modes := fs.String("modes", "baseline,incremental,push", "modes: baseline, incremental, push")
	scale := fs.Float64("scale", 0.1, "time scale: every interval is multiplied by it")
	logPath := fs.String("log", "", "append the nodes' logs (info and above) to this file")
	rounds := fs.Int("rounds", 2, "synchronisation intervals measured per run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	m := matrix{
		ChangeIntervals: []time.Duration{100 * time.Millisecond, 10 * time.Second},
		SyncIntervals:   []time.Duration{10 * time.Second, 100 * time.Second},
		Modes:           strings.Split(*modes, ","),
		Scale:           *scale,
		Rounds:          *rounds,
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-sizes: %q is not a size", s)
		}
		m.Sizes = append(m.Sizes, n)
	}
	if m.Scale <= 0 || m.Rounds <= 0 {
		return errors.New("-scale and -rounds must be positive")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		nodeLog = slog.New(slog.NewTextHandler(f, nil))
	}
	var results []outcome
	for _, e := range m.experiments() {
		fmt.Fprintf(os.Stderr, "%s ... ", e)
		o, err := runExperiment(ctx, e)
		var unsettled *notSettled
		if errors.As(err, &unsettled) {
			// A cell whose Destinations never caught up is reported as
			// such; the rest of the matrix still runs.
			o = outcome{experiment: e, Failed: err.Error()}
		} else if err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
		fmt.Fprintf(os.Stderr, "%s\n", o.short())
		results = append(results, o)
	}
	return writeReport(*out, m, results)
}

// nodeLog receives the nodes' logs; -log sets it.
var nodeLog = slog.New(slog.DiscardHandler)

// experiment is one cell of the matrix.
type experiment struct {
	Size           int
	ChangeInterval time.Duration // paper time
	SyncInterval   time.Duration // paper time; push ignores it
	Mode           string
	Scale          float64
	Rounds         int
}

func (e experiment) String() string {
	return fmt.Sprintf("%s n=%d change=%v sync=%v", e.Mode, e.Size, e.ChangeInterval, e.SyncInterval)
}

// real turns a paper interval into the one this run uses.
func (e experiment) real(d time.Duration) time.Duration { return time.Duration(float64(d) * e.Scale) }

func (m matrix) experiments() []experiment {
	var out []experiment
	for _, mode := range m.Modes {
		for _, ci := range m.ChangeIntervals {
			syncs := m.SyncIntervals
			if mode == "push" {
				syncs = syncs[:1] // a push Destination does not poll
			}
			for _, si := range syncs {
				for _, n := range m.Sizes {
					out = append(out, experiment{Size: n, ChangeInterval: ci, SyncInterval: si, Mode: mode, Scale: m.Scale, Rounds: m.Rounds})
				}
			}
		}
	}
	return out
}
