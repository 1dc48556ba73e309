// Command scale measures viaduct at a consortium's size, each part the way
// an operator meets it: `viaduct serve` in a process of its own, read from
// outside through its /metrics, /proc and HTTP.
//
//	scale baseline -viaduct BIN -source URL -n 1000000 -work DIR
//	scale lists    -viaduct BIN -work DIR
//	scale synth    -catalog FILE -n 10000000
//	scale catlists -catalog FILE -n 10000000
//	scale files    -dir DIR -listen ADDR
//	scale catserve -catalog FILE -listen ADDR
//	scale sources  -viaduct BIN -sources URL,URL,... -n 2000 -work DIR
//
// baseline harvests a Source into a fresh node under DIR/node until its
// catalog holds n resources, sampling the node every -every (resources,
// their rate over the last interval, resident memory now and at its peak,
// CPU time) into DIR/baseline.csv, and ends with a summary: wall time,
// CPU per resource, and the bytes per resource of the catalog, of EVENTS
// (and of the whole JetStream directory) and of the blob store.
//
// lists starts a node on the data directory baseline left, reads its
// Resource List (index and every part) and its Change List Index with
// every Change List, as a Destination does, saves the documents once and
// reads them again from `scale files` (net/http's FileServer in a process
// of its own) serving the same bytes. synth builds a catalog of n
// resources with the catalog package's batch apply; catlists serves it
// with the republish package (`scale catserve`, a process of its own) and
// reads its Resource List the same way.
//
// sources harvests several Sources at once with viaduct's default
// politeness and prints how long each Source took beside the bound its
// per_host_rate sets.
//
// See bench/README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: scale baseline|lists|synth|catlists|files|catserve|sources [flags]")
	}
	cmds := map[string]func(context.Context, []string) error{
		"baseline": baselineCmd,
		"lists":    listsCmd,
		"synth":    synthCmd,
		"catlists": catListsCmd,
		"files":    filesCmd,
		"catserve": catServeCmd,
		"sources":  sourcesCmd,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd(ctx, args[1:])
}
