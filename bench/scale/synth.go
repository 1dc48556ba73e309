package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/republish"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage/dir"
)

// synthCollection is the collection synth fills and catserve serves.
const synthCollection = "synth"

// synthBase is when the first synthetic resource was stored; each later
// one a millisecond after the one before.
var synthBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// synthCmd builds a catalog of n resources of 1 KiB, each with digests of
// its own, in batches as the node's applier writes them.
func synthCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	path := fs.String("catalog", "", "catalog file to create (must not exist)")
	n := fs.Int("n", 10_000_000, "resources")
	batch := fs.Int("batch", 10_000, "events per batch")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || fs.NArg() > 0 {
		return errors.New("synth: -catalog is required and takes no arguments")
	}
	if _, err := os.Stat(*path); err == nil {
		return fmt.Errorf("synth: %s exists", *path)
	}
	cat, err := catalog.Open(ctx, *path, nil)
	if err != nil {
		return err
	}
	defer cat.Close()
	fmt.Printf("building %d resources into %s, load %s\n", *n, *path, loadavg())
	start := time.Now()
	lastReport := start
	b := make([]catalog.Applied, 0, *batch)
	for i := range *n {
		b = append(b, catalog.Applied{Seq: uint64(i + 1), At: synthBase.Add(time.Duration(i) * time.Millisecond), Event: synthEvent(i)})
		if len(b) == cap(b) || i == *n-1 {
			if err := cat.ApplyBatch(ctx, b); err != nil {
				return fmt.Errorf("synth: at %d: %w", i+1, err)
			}
			b = b[:0]
			if time.Since(lastReport) >= 30*time.Second || i == *n-1 {
				lastReport = time.Now()
				fmt.Printf("%d resources after %.0f s (%.0f/s overall), load %s\n", i+1, time.Since(start).Seconds(),
					float64(i+1)/time.Since(start).Seconds(), loadavg())
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := cat.Close(); err != nil {
		return err
	}
	size, _ := treeBytes(*path)
	fmt.Printf("built in %.0f s; catalog %.0f MB (%.0f B/resource)\n", time.Since(start).Seconds(), float64(size)/1e6, float64(size)/float64(*n))
	return nil
}

// synthEvent is resource i's creation: digests of its own (of i), as
// bench/staticsrc's files would have.
func synthEvent(i int) *viaduct.Event {
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], uint64(i))
	sha := sha256.Sum256(seed[:])
	m := md5.Sum(seed[:])
	md5hex := hex.EncodeToString(m[:])
	at := synthBase.Add(time.Duration(i) * time.Millisecond)
	length := int64(1024)
	uri := fmt.Sprintf("http://source.example.org/files/%02x/%08d", i%256, i)
	return &viaduct.Event{Source: "origin", Collection: synthCollection, URI: uri, Op: "created",
		SHA256: hex.EncodeToString(sha[:]), MD5: md5hex, Length: length, Type: "application/octet-stream",
		Upstream: viaduct.Change{Source: "origin", Collection: synthCollection, URI: uri, Op: "created", Time: at, Modified: at,
			Hash: resourcesync.Hashes{{Alg: "md5", Value: md5hex}}, Length: &length, Type: "application/octet-stream"}}
}

// catServeCmd serves a catalog synth built with the republish package, as
// a node serves its own, with the node's default document cache.
func catServeCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("catserve", flag.ContinueOnError)
	path := fs.String("catalog", "", "catalog file synth built")
	listen := fs.String("listen", "127.0.0.1:18283", "address to serve on")
	scratch := fs.String("scratch", "", "directory for the document cache and an empty blob store (created)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || *scratch == "" || fs.NArg() > 0 {
		return errors.New("catserve: -catalog and -scratch are required and take no arguments")
	}
	cat, err := catalog.Open(ctx, *path, nil)
	if err != nil {
		return err
	}
	defer cat.Close()
	blobs, err := dir.New(filepath.Join(*scratch, "blobs"))
	if err != nil {
		return err
	}
	cfg := republish.Config{BaseURL: "http://" + *listen, Collections: []republish.Collection{{Name: synthCollection}},
		Cache: republish.CacheConfig{Dir: filepath.Join(*scratch, "cache")}}
	if err := os.MkdirAll(cfg.Cache.Dir, 0o755); err != nil {
		return err
	}
	srv, err := republish.New(cfg, republish.FromSQLite(cat), blobs, slog.Default(), prometheus.NewRegistry())
	if err != nil {
		return err
	}
	return serveUntil(ctx, *listen, srv.Handler())
}

// catListsCmd serves a synthetic catalog in a process of its own (scale
// catserve) and reads its Resource List, then the same bytes from a file
// server.
func catListsCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("catlists", flag.ContinueOnError)
	path := fs.String("catalog", "", "catalog file synth built")
	work := fs.String("work", "", "scratch directory (created): the server's cache, its log, the saved documents")
	rounds := fs.Int("rounds", 3, "reads of the list from each server (a document is cached on its second read at one catalog state)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || *work == "" || fs.NArg() > 0 {
		return errors.New("catlists: -catalog and -work are required and take no arguments")
	}
	if err := os.MkdirAll(*work, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	srv, err := start(ctx, filepath.Join(*work, "catserve.log"), self, "catserve", "-catalog", *path, "-listen", addr,
		"-scratch", filepath.Join(*work, "scratch"))
	if err != nil {
		return err
	}
	defer srv.stop()
	if err := srv.waitHTTP(ctx, "http://"+addr+"/"); err != nil {
		return err
	}
	return measureLists(ctx, srv, "http://"+addr, []string{"/" + synthCollection + "/resourcelist.xml"}, *rounds, filepath.Join(*work, "docs"))
}
