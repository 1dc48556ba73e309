package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/queue"
)

// catalogUsage is what viaduct catalog --help prints.
const catalogUsage = `Usage: viaduct catalog rebuild --config FILE
       viaduct catalog repack --config FILE [--vacuum]

rebuild  builds the node's catalog again from EVENTS.
repack   rewrites the rows an older version wrote in the current forms
         (smaller, and quicker to list); --vacuum then gives the freed
         pages back to the file system, which needs as much free disk
         as the catalog takes.

The node must be stopped.`

// runCatalog runs the catalog's offline tools: rebuild and repack.
func runCatalog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "rebuild":
			return runCatalogRebuild(ctx, args[1:], stdout, stderr)
		case "repack":
			return runCatalogRepack(ctx, args[1:], stdout, stderr)
		case "-h", "--help", "help":
			fmt.Fprintln(stderr, catalogUsage)
			return nil
		}
	}
	return fmt.Errorf("%w: say what to do: viaduct catalog rebuild|repack --config FILE", errUsage)
}

// runCatalogRepack rewrites a stopped node's catalog rows written in an
// older form, saying how far it is every second, and with --vacuum gives
// the freed pages back.
func runCatalogRepack(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("catalog repack", "--config FILE [--vacuum]", stderr)
	path := fs.String("config", "", "the stopped node's configuration `file`")
	vacuum := fs.Bool("vacuum", false, "give the freed pages back to the file system afterwards (needs as much free disk as the catalog)")
	cfg, log, err := stoppedNode(ctx, fs, path, args, stderr)
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.Catalog.Path); err != nil {
		return fmt.Errorf("no catalog to repack: %w", err)
	}
	var last time.Time
	progress := func(p catalog.RepackProgress) {
		if time.Since(last) < time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(stdout, "%s: %d rows read, %d rewritten, %s\n", p.Table, p.Read, p.Written, p.Elapsed.Round(time.Second))
	}
	res, err := catalog.Repack(ctx, cfg.Catalog.Path, log.With("role", "catalog"), progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "catalog %s repacked: %d of %d resource rows and %d of %d change-log rows rewritten\n",
		cfg.Catalog.Path, res.ResourcesRewritten, res.Resources, res.ChangesRewritten, res.Changes)
	if !*vacuum {
		fmt.Fprintln(stdout, "the pages freed are reused as the catalog grows; run it again with --vacuum to give them back now")
		return nil
	}
	before, after, err := catalog.Vacuum(ctx, cfg.Catalog.Path, log.With("role", "catalog"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "catalog vacuumed: %d bytes, from %d\n", after, before)
	return nil
}

// runCatalogRebuild moves a stopped node's catalog aside and builds it
// again from EVENTS, saying how far it is every second.
func runCatalogRebuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("catalog rebuild", "--config FILE", stderr)
	path := fs.String("config", "", "the stopped node's configuration `file`")
	cfg, log, err := stoppedNode(ctx, fs, path, args, stderr)
	if err != nil {
		return err
	}
	q, err := queue.Open(ctx, cfg.Queue, log.With("role", "queue"))
	if err != nil {
		return fmt.Errorf("opening queue: %w", err)
	}
	defer q.Close()
	if err := checkWholeEvents(ctx, q); err != nil {
		return err
	}
	progress := func(p catalog.RebuildProgress) {
		rate := float64(p.Applied) / max(p.Elapsed.Seconds(), 0.001)
		pct := 100.0
		if p.Last > 0 {
			pct = 100 * float64(p.Applied) / float64(p.Last)
		}
		fmt.Fprintf(stdout, "applied %d of %d events (%.0f%%), %.0f events/s\n", p.Applied, p.Last, pct, rate)
	}
	res, err := catalog.Rebuild(ctx, cfg.Catalog.Path, q, log.With("role", "catalog"), progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "catalog %s rebuilt from EVENTS up to sequence %d\n", cfg.Catalog.Path, res.Applied)
	switch {
	case res.Aside == "":
		fmt.Fprintln(stdout, "there was no catalog before")
	case res.CarryErr != nil:
		fmt.Fprintf(stdout, "the old catalog is at %s; its Dumps' state could not be read (%v): the Dumps are planned again\n", res.Aside, res.CarryErr)
	default:
		fmt.Fprintf(stdout, "the old catalog is at %s (%d rows of state carried over); remove it once the node serves\n", res.Aside, res.Carried)
	}
	return nil
}

// stoppedNode parses the flags of an offline tool (fs, whose --config is
// path) and loads the configuration and its logger, refusing while the
// node answers.
func stoppedNode(ctx context.Context, fs *flag.FlagSet, path *string, args []string, stderr io.Writer) (node.Config, *slog.Logger, error) {
	if err := fs.Parse(args); err != nil {
		return node.Config{}, nil, err
	}
	if fs.NArg() > 0 {
		return node.Config{}, nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg, log, err := configured(*path, stderr)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, log, checkStopped(ctx, cfg)
}

// checkStopped refuses to go on while a node answers on the admin
// listener of cfg: its applier writes the catalog, and the embedded NATS
// store cannot be opened twice.
func checkStopped(ctx context.Context, cfg node.Config) error {
	if _, port, err := net.SplitHostPort(cfg.Admin.Listen); err != nil || port == "0" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	url := adminBase(cfg.Admin.Listen) + "/livez"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	resp.Body.Close()
	return fmt.Errorf("a node answers at %s: stop it first (it writes the catalog, and holds the NATS store)", url)
}

// checkWholeEvents refuses a rebuild from an EVENTS that retention has
// cut: the catalog would miss every change before its first event.
func checkWholeEvents(ctx context.Context, q *queue.Queue) error {
	s, err := q.JetStream().Stream(ctx, queue.StreamEvents)
	if err != nil {
		return fmt.Errorf("reading EVENTS: %w", err)
	}
	st := s.CachedInfo().State
	if st.FirstSeq > 1 {
		return fmt.Errorf("EVENTS starts at sequence %d: the events before it were removed (queue.events_max_age or events_max_bytes), "+
			"and a catalog rebuilt from the rest would miss them; move the catalog aside and start the node, which starts from the newest catalog snapshot, or restore a backup (docs/runbook.md)", st.FirstSeq)
	}
	return nil
}
