// Command compare times viaduct and a reference side by side on the same
// upstream Source, in alternating rounds, and prints one table of absolute
// figures and ratios. Every contender is a process of its own, timed from
// its start to the last resource stored, with its peak resident memory.
//
// Contenders:
//   - viaduct: `viaduct serve` with a fresh data directory, until its
//     catalog holds -n resources (read from its /metrics);
//   - resync: the Python reference client, `resync-sync --baseline`, into
//     a fresh directory;
//   - copy: `cp -r` of the Source's files and a sync, the plain file copy
//     a mirror of large bitstreams is measured against;
//   - get: bench/httpget, a plain loop of concurrent GETs writing each
//     body to a file, and a sync; get-verify the same loop computing each
//     body's md5 and sha-256 and checking the md5 against the Resource
//     List, as a verified, content-addressed mirror must;
//   - s3put: bench/s3put, a plain minio-go PUT loop of the same objects;
//     s3put-unsigned the same loop sending each body unsigned with its
//     Content-MD5, as viaduct sends small blobs.
//
// See bench/README.md for the whole harness.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/miniotest"
)

// options are compare's flags.
type options struct {
	Viaduct, Resync, S3Put, HTTPGet string
	SourceURL, SourceDir            string
	N                               int
	Size                            int64
	Rounds, Warmup                  int
	Contenders                      []string
	Blobs                           string
	S3Endpoint, S3Key, S3Secret     string
	MinIO                           string
	Work                            string
	Workers                         int
	// EventsCompression is viaduct's queue.events_compression; empty
	// leaves its default.
	EventsCompression string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.StringVar(&o.Viaduct, "viaduct", "viaduct", "viaduct binary")
	fs.StringVar(&o.Resync, "resync", "", "directory of the resync 2.0.1 client (holds resync-sync)")
	fs.StringVar(&o.S3Put, "s3put", "s3put", "bench/s3put binary")
	fs.StringVar(&o.HTTPGet, "httpget", "httpget", "bench/httpget binary")
	fs.StringVar(&o.SourceURL, "source", "http://127.0.0.1:18181/", "the static Source's URL")
	fs.StringVar(&o.SourceDir, "source-dir", "", "the static Source's directory (for copy, get and s3put)")
	fs.IntVar(&o.N, "n", 20000, "resources the Source holds")
	fs.Int64Var(&o.Size, "size", 1024, "bytes per resource")
	fs.IntVar(&o.Rounds, "rounds", 2, "rounds; each runs every contender once, in alternating order")
	fs.IntVar(&o.Warmup, "warmup", 0, "rounds run before the measured ones, their figures printed but not in the table")
	with := fs.String("with", "resync,viaduct", "contenders, comma-separated: resync, viaduct, viaduct-events-none (EVENTS kept uncompressed), copy, get, get-verify, s3put, s3put-unsigned")
	fs.StringVar(&o.Blobs, "blobs", "dir", "viaduct's blob store: dir or s3")
	fs.StringVar(&o.S3Endpoint, "s3-endpoint", "", "host:port of the S3 server (plain HTTP)")
	fs.StringVar(&o.S3Key, "s3-key", os.Getenv("BENCH_S3_KEY"), "S3 access key")
	fs.StringVar(&o.S3Secret, "s3-secret", os.Getenv("BENCH_S3_SECRET"), "S3 secret key")
	fs.StringVar(&o.MinIO, "minio", "", "the MinIO server binary, possibly preceded by taskset and its CPUs: each S3 run then gets a fresh server of its own instead of -s3-endpoint")
	fs.StringVar(&o.Work, "work", os.TempDir(), "directory for the contenders' output (same disk as the Source for copy)")
	fs.IntVar(&o.Workers, "workers", 0, "viaduct fetch workers (0: its default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.Contenders = strings.Split(*with, ",")
	// Each contender's output is kept until every round has run: on ext4,
	// a file created soon after many were deleted costs the kernel a walk
	// past each recently freed inode, so deleting one contender's tens of
	// thousands of files would slow the next one down. Outputs too large
	// to keep (the 10 MB bitstreams, a thousand files) go at once.
	var outputs []string
	defer func() {
		for _, d := range outputs {
			os.RemoveAll(d)
		}
	}()
	keep := int64(o.N)*o.Size <= keepOutputs
	if o.SourceDir != "" {
		if err := readTree(o.SourceDir); err != nil {
			return fmt.Errorf("reading the Source's files into the page cache: %w", err)
		}
	}
	var results []result
	// Warm-up rounds are numbered 0 and below, and run in round 1's order.
	for round := 1 - o.Warmup; round <= o.Rounds; round++ {
		order := o.Contenders
		if round > 0 && round%2 == 0 {
			order = reversed(order)
		}
		for _, c := range order {
			r, dir, err := runOne(ctx, o, c, round)
			if keep {
				outputs = append(outputs, dir)
			} else {
				os.RemoveAll(dir)
			}
			if err != nil {
				return fmt.Errorf("%s, %s: %w", roundLabel(round), c, err)
			}
			if round < 1 {
				fmt.Fprintf(os.Stderr, "warm-up  %-8s %s\n", c, r.summary(o))
				continue
			}
			fmt.Fprintf(os.Stderr, "round %d %-8s %s\n", round, c, r.summary(o))
			results = append(results, r)
		}
	}
	printTable(os.Stdout, o, results)
	return nil
}

// readTree reads every file under dir once, so that the Source's files
// are in the page cache before the first round: otherwise the first
// contender waits on the disk where the others do not.
func readTree(dir string) error {
	buf := make([]byte, 1<<20)
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyBuffer(io.Discard, f, buf)
		return err
	})
}

// roundLabel names a round in file and bucket names: round1, round2, …
// and warmup1, warmup2, … for the warm-up rounds (numbered 0 and below).
func roundLabel(round int) string {
	if round < 1 {
		return "warmup" + strconv.Itoa(1-round)
	}
	return "round" + strconv.Itoa(round)
}

// keepOutputs is the most a contender's output may hold to be kept until
// the end of the run.
const keepOutputs = 4 << 30

// runOne runs contender c once, its output in a new directory under
// o.Work that it returns for the caller to remove.
func runOne(ctx context.Context, o options, c string, round int) (result, string, error) {
	dir, err := os.MkdirTemp(o.Work, "bench-"+c+"-")
	if err != nil {
		return result{}, "", err
	}
	r := result{Contender: c, Round: round}
	// Every S3 run gets a server of its own: one kept for the whole run
	// would hold the objects of every run before, and each contender's
	// rate would depend on its place in the order.
	if o.MinIO != "" && (strings.HasPrefix(c, "viaduct") && o.Blobs == "s3" || strings.HasPrefix(c, "s3put")) {
		srv, err := miniotest.Launch(strings.Fields(o.MinIO), filepath.Join(dir, "minio"))
		if err != nil {
			return r, dir, err
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stopping MinIO:", err)
			}
		}()
		o.S3Endpoint, o.S3Key, o.S3Secret = srv.Endpoint, srv.AccessKey, srv.SecretKey
	}
	switch c {
	case "viaduct":
		err = runViaduct(ctx, o, dir, &r)
	case "viaduct-events-none":
		o.EventsCompression = "none"
		err = runViaduct(ctx, o, dir, &r)
	case "resync":
		err = runResync(ctx, o, dir, &r)
	case "copy":
		err = runCopy(ctx, o, dir, &r)
	case "get", "get-verify":
		err = runGet(ctx, o, dir, c == "get-verify", &r)
	case "s3put", "s3put-unsigned":
		err = runS3Put(ctx, o, round, c == "s3put-unsigned", &r)
	default:
		err = errors.New("unknown contender")
	}
	return r, dir, err
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// since is how long ago t was, in seconds.
func since(t time.Time) float64 { return time.Since(t).Seconds() }
