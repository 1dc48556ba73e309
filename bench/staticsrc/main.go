// Command staticsrc is the neutral Source of viaduct's benchmarks: a static
// ResourceSync Source written to a directory once and served by a plain
// net/http file server in a process of its own, as a Source that publishes
// its documents as files would serve them. Nothing in it knows viaduct.
//
//	staticsrc gen -dir DIR -base http://127.0.0.1:18181 -n 20000 -size 1024
//	staticsrc serve -dir DIR -listen 127.0.0.1:18181
//	staticsrc serve -dir DIR -listen 127.0.0.1:19000 -count 50
//
// gen writes N bitstreams of SIZE random bytes under DIR/files, a Resource
// List (an Index with parts past 50,000 entries) declaring each one's
// length and md5 (and with -sha256 its sha-256, as an aggregator
// republishing its copies does), a Capability List and the Source Description at
// /.well-known/resourcesync. serve with -count N serves N Sources, each
// written by gen into DIR/00, DIR/01, … and served on consecutive ports
// from -listen's, one http.FileServer each.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/viaduct-mirror/viaduct/bench/internal/ports"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "staticsrc:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: staticsrc gen|serve [flags]")
	}
	switch args[0] {
	case "gen":
		fs := flag.NewFlagSet("gen", flag.ContinueOnError)
		var g genConfig
		fs.StringVar(&g.Dir, "dir", "", "directory to write the Source into (created)")
		fs.StringVar(&g.Base, "base", "http://127.0.0.1:18181", "URL the Source will be served at")
		fs.IntVar(&g.N, "n", 20000, "number of bitstreams")
		fs.Int64Var(&g.Size, "size", 1024, "bytes per bitstream")
		fs.Int64Var(&g.Seed, "seed", 1, "seed of the bitstreams' bytes")
		fs.BoolVar(&g.SHA256, "sha256", false, "declare each bitstream's sha-256 beside its md5, as an aggregator does")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if g.Dir == "" || fs.NArg() > 0 {
			return errors.New("gen: -dir is required and takes no arguments")
		}
		return generate(g)
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		dir := fs.String("dir", "", "directory written by gen")
		listen := fs.String("listen", "127.0.0.1:18181", "address to serve on")
		count := fs.Int("count", 1, "Sources to serve: past 1, DIR/00, DIR/01, … on consecutive ports from -listen's")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *dir == "" || fs.NArg() > 0 || *count < 1 {
			return errors.New("serve: -dir is required, -count at least 1, and no arguments")
		}
		if *count == 1 {
			return serve(ctx, *dir, *listen)
		}
		return serveMany(ctx, *dir, *listen, *count)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// serve is a plain http.FileServer: what a Source that publishes its
// documents as static files offers, with nothing tuned for any client.
func serve(ctx context.Context, dir, listen string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	slog.Info("static Source serving", "dir", dir, "url", "http://"+ln.Addr().String()+"/")
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveMany serves count Sources, DIR/00 on listen's port and each next
// one on the next port, until ctx ends or one of them fails.
func serveMany(ctx context.Context, dir, listen string, count int) error {
	if _, err := ports.Plus(listen, 0); err != nil {
		return fmt.Errorf("-listen %s: %w", listen, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, count)
	for i := range count {
		d := filepath.Join(dir, fmt.Sprintf("%02d", i))
		addr, _ := ports.Plus(listen, i) // checked above
		go func() {
			err := serve(ctx, d, addr)
			if err != nil {
				err = fmt.Errorf("%s: %w", addr, err)
			}
			errs <- err
		}()
	}
	var failed error
	for range count {
		if err := <-errs; err != nil && failed == nil {
			failed = err
			cancel()
		}
	}
	return failed
}
