// Command viaduct is a ResourceSync aggregator: it harvests upstream
// ResourceSync Sources, keeps a verified copy of every bitstream and
// republishes the whole as a ResourceSync Source of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/viaduct-mirror/viaduct/node"
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and returns an error; usageError asks for exit code 2.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"validate": {"check ResourceSync documents against the spec", runValidate},
	"serve":    {"run the aggregator: harvest, store, republish", runServe},
	"sim":      {"serve a simulated ResourceSync Source on loopback", runSim},
	"demo":     {"run viaduct on embedded defaults against a built-in simulated Source", runDemo},
	"migrate":  {"apply this configuration's queue settings over those a cluster has", runMigrate},
	"version":  {"print the version", runVersion},
	"admin":    {"ask a running node: Sources, sync, re-baseline, dead letters, dumps, reload", runAdmin},

	"healthcheck": {"probe a node's /readyz: exit 0 when ready, 1 when not (container health checks)", runHealthcheck},
	"backup":      {"take a consistent backup of a running node's catalog and NATS streams", runBackup},
	"restore":     {"put a backup in place on a new data directory", runRestore},
	"catalog":     {"rebuild a stopped node's catalog from EVENTS, or repack its older rows (catalog rebuild|repack)", runCatalog},
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// errUsage marks errors in how the command was called (exit code 2).
var errUsage = errors.New("usage")

// errFailed marks a command that already said why it failed (exit code 1,
// nothing more printed).
var errFailed = errors.New("failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Run runs viaduct with args and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = []string{"version"}
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "viaduct: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "viaduct %s: %v\n", args[0], err)
		return 2
	case errors.Is(err, errFailed):
		return 1
	default:
		fmt.Fprintf(stderr, "viaduct %s: %v\n", args[0], err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "viaduct is a ResourceSync aggregator.\n\nUsage:\n  viaduct <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'viaduct <command> --help' for a command's flags.")
}

// newFlags returns a FlagSet for a subcommand that prints its usage to
// stderr and returns errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("viaduct "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: viaduct %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// configured loads the configuration at path, which --config named, and
// the logger it sets up.
func configured(path string, stderr io.Writer) (node.Config, *slog.Logger, error) {
	if path == "" {
		return node.Config{}, nil, fmt.Errorf("%w: --config is required", errUsage)
	}
	cfg, err := node.Load(path)
	if err != nil {
		return cfg, nil, err
	}
	log, err := newLogger(stderr, cfg.Log)
	return cfg, log, err
}

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fmt.Fprintln(stdout, "viaduct", version)
	return nil
}
