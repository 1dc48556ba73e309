// Command httpget is the plain HTTP reference for viaduct's benchmarks of
// large bitstreams: a loop of concurrent GETs, each body written to a file
// of its own, and a sync(1) at the end, as after the copy it is measured
// beside. With -verify it also computes each body's md5 and sha-256
// while writing it (crypto/md5 and crypto/sha256, nothing shared between
// bodies) and checks the md5 against the one the Resource List declares:
// the least a verified, content-addressed mirror must do. Nothing else: no
// queue, no catalog, no retries. It prints how many files it wrote.
//
//	httpget -dir SRC -out DEST [-verify]
//
// The URLs and digests come from the Resource List's parts that
// bench/staticsrc wrote into SRC (resourcelist-N.xml), read from the disk:
// the loop fetches the bitstreams over HTTP, not the lists.
package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "httpget:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("httpget", flag.ContinueOnError)
	dir := fs.String("dir", "", "the static Source's directory, holding its Resource List")
	out := fs.String("out", "", "directory to write the bodies into (created)")
	workers := fs.Int("workers", 8, "concurrent GETs")
	verify := fs.Bool("verify", false, "compute each body's md5 and sha-256 and check the md5 against the Resource List's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *out == "" || fs.NArg() > 0 {
		return errors.New("-dir and -out are required, and no arguments")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	entries, err := listed(*dir)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *workers, DisableCompression: true}}
	todo := make(chan *resourcesync.Entry, 1024)
	var wg sync.WaitGroup
	errs := make(chan error, *workers)
	for range *workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for e := range todo {
				if err := get(ctx, client, e, *out, *verify, buf); err != nil {
					errs <- err
					for range todo {
					}
					return
				}
			}
		})
	}
	for _, e := range entries {
		todo <- e
	}
	close(todo)
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		return err
	}
	// sync(1), as the copy it is measured beside.
	if err := exec.CommandContext(ctx, "sync").Run(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	fmt.Println(len(entries)) // every one, or an error above
	return nil
}

// listed reads the entries of the Resource List's parts in dir
// (resourcelist-N.xml; resourcelist.xml is their index).
func listed(dir string) ([]*resourcesync.Entry, error) {
	parts, err := filepath.Glob(filepath.Join(dir, "resourcelist-*.xml"))
	if err != nil || len(parts) == 0 {
		return nil, fmt.Errorf("no Resource List in %s", dir)
	}
	var out []*resourcesync.Entry
	for _, p := range parts {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		r, err := resourcesync.NewReader(f, resourcesync.Limits{})
		for err == nil {
			var e *resourcesync.Entry
			if e, err = r.Next(); err == nil {
				out = append(out, e)
			}
		}
		f.Close()
		if !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	return out, nil
}

// get writes the body of e's URL under out, at the URL's path; with
// verify, it hashes the body on the way and compares its md5 with the
// one e declares.
func get(ctx context.Context, client *http.Client, e *resourcesync.Entry, out string, verify bool, buf []byte) error {
	url := e.Loc
	u, err := neturl.Parse(url)
	if err != nil {
		return err
	}
	rel := filepath.FromSlash(strings.TrimPrefix(u.Path, "/"))
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: its path would be written outside %s", url, out)
	}
	path := filepath.Join(out, rel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var w io.Writer = struct{ io.Writer }{f} // a plain Write loop, no ReadFrom
	var m, s hash.Hash
	if verify {
		m, s = md5.New(), sha256.New()
		w = io.MultiWriter(w, m, s)
	}
	if _, err := io.CopyBuffer(w, resp.Body, buf); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !verify {
		return nil
	}
	if e.MD == nil {
		return fmt.Errorf("%s: the Resource List declares no md5", url)
	}
	s.Sum(buf[:0]) // the key a content-addressed store would file it under
	if got, want := hex.EncodeToString(m.Sum(nil)), e.MD.Hash.Get(resourcesync.MD5); got != want {
		return fmt.Errorf("GET %s: md5 %s, the Resource List declares %q", url, got, want)
	}
	return nil
}
