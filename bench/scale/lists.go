package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// listsCmd serves the catalog a baseline left and reads its lists, then
// reads the same bytes from a plain file server.
func listsCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("lists", flag.ContinueOnError)
	viaduct := fs.String("viaduct", "viaduct", "viaduct binary")
	work := fs.String("work", "", "the directory a baseline ran in (its node's data is DIR/node)")
	source := fs.String("source", "http://127.0.0.1:18281/", "the Source's URL, as the baseline had it (it need not answer)")
	rounds := fs.Int("rounds", 3, "reads of each list from each server (a document is cached on its second read at one catalog state)")
	collection := fs.String("collection", "bench", "the collection to read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *work == "" || fs.NArg() > 0 {
		return errors.New("lists: -work is required and takes no arguments")
	}
	data := filepath.Join(*work, "node")
	if _, err := os.Stat(filepath.Join(data, "catalog.db")); err != nil {
		return fmt.Errorf("lists: no catalog in %s: run baseline first", data)
	}
	// The node serves what its catalog holds; the Source's next pass, if
	// one falls due meanwhile, fails without changing it.
	nd, err := startNode(ctx, *viaduct, *work, "lists", data, "", []string{*source})
	if err != nil {
		return err
	}
	defer nd.stop()
	docs := []string{"/" + *collection + "/resourcelist.xml", "/" + *collection + "/changelist.xml"}
	return measureLists(ctx, nd.proc, "http://"+nd.pub, docs, *rounds, filepath.Join(*work, "docs"))
}

// measureLists reads each of docs (and, for an index, every document it
// lists) from base rounds times, with the serving process srv's memory
// and CPU; then saves the documents under saveDir in one more read, left
// out of the table, and reads them the same way from `scale files`
// serving saveDir. The saving is kept out of the timed rounds: writing a
// list of a million entries to disk took as long as reading it, and the
// file server's rounds write nothing.
func measureLists(ctx context.Context, srv *proc, base string, docs []string, rounds int, saveDir string) error {
	fmt.Printf("load %s at start\n", loadavg())
	rss0, _ := srv.status()
	fmt.Printf("serving process: %.0f MB resident before the first read\n", float64(rss0)/1024)
	fmt.Println("| server | document | round | documents | entries | MB | seconds | entries/s | server CPU-µs/entry | server RSS / peak MB | load |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	os.RemoveAll(saveDir)
	for _, doc := range docs {
		for round := 1; round <= rounds; round++ {
			if err := readOnce(srv, base, doc, "viaduct", round); err != nil {
				return err
			}
		}
		if _, err := readAll(base, doc, saveDir); err != nil {
			return fmt.Errorf("saving %s: %w", doc, err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	addr, err := freePort()
	if err != nil {
		return err
	}
	files, err := start(ctx, filepath.Join(filepath.Dir(saveDir), "files.log"), self, "files", "-dir", saveDir, "-listen", addr)
	if err != nil {
		return err
	}
	defer files.stop()
	if err := files.waitHTTP(ctx, "http://"+addr+"/"); err != nil {
		return err
	}
	for _, doc := range docs {
		for round := 1; round <= rounds; round++ {
			if err := readOnce(files, "http://"+addr, doc, "files", round); err != nil {
				return err
			}
		}
	}
	return nil
}

// readOnce reads doc and its children once from base and prints a row.
func readOnce(srv *proc, base, doc, name string, round int) error {
	u0, s0 := srv.cpu()
	start := time.Now()
	st, err := readAll(base, doc, "")
	if err != nil {
		return fmt.Errorf("%s, %s: %w", name, doc, err)
	}
	secs := time.Since(start).Seconds()
	u1, s1 := srv.cpu()
	rss, hwm := srv.status()
	perEntry := 0.0
	if st.entries > 0 {
		perEntry = (u1 + s1 - u0 - s0) * 1e6 / float64(st.entries)
	}
	fmt.Printf("| %s | %s | %d | %d | %d | %.1f | %.2f | %.0f | %.1f | %.0f / %.0f | %s |\n", name, doc, round, st.docs, st.entries,
		float64(st.bytes)/1e6, secs, float64(st.entries)/secs, perEntry, float64(rss)/1024, float64(hwm)/1024, loadavg())
	return nil
}

type readStats struct {
	docs, entries int
	bytes         int64
}

// readAll GETs base+path and parses it as a Destination's reader does;
// for an index, every document it lists (by the path of its loc, from
// the same base) in turn. With save, each body is kept under save at
// its path, a query in the file's name.
func readAll(base, path, save string) (readStats, error) {
	var st readStats
	resp, err := plainClient.Get(base + path)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET %s: %s", base+path, resp.Status)
	}
	var r io.Reader = resp.Body
	var kept bytes.Buffer
	if save != "" {
		r = io.TeeReader(resp.Body, &kept)
	}
	counted := &countingReader{r: r}
	lim := resourcesync.DefaultLimits()
	lim.MaxBytes, lim.MaxDecompressed, lim.MaxEntries = 1<<31, 1<<31, 20_000_000
	rd, err := resourcesync.NewReader(counted, lim)
	if err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	index := rd.Header().Root == resourcesync.SitemapIndex
	var listed []string
	for {
		e, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, fmt.Errorf("%s: %w", path, err)
		}
		if !index {
			st.entries++
			continue
		}
		u, err := neturl.Parse(e.Loc)
		if err != nil {
			return st, fmt.Errorf("%s lists %q: %w", path, e.Loc, err)
		}
		listed = append(listed, u.RequestURI())
	}
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return st, err
	}
	resp.Body.Close()
	st.docs, st.bytes = 1, counted.n
	if save != "" {
		p := filepath.Join(save, filepath.FromSlash(strings.TrimPrefix(path, "/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return st, err
		}
		if err := os.WriteFile(p, kept.Bytes(), 0o644); err != nil {
			return st, err
		}
	}
	for _, p := range listed {
		more, err := readAll(base, p, save)
		if err != nil {
			return st, err
		}
		st.docs, st.entries, st.bytes = st.docs+more.docs, st.entries+more.entries, st.bytes+more.bytes
	}
	return st, nil
}

// plainClient asks for documents as they are (no Accept-Encoding: gzip,
// which Go's default transport would add): the file server sends the
// saved bytes as they are, so a node must be read the same way, or its
// rate would include compressing on one side and decompressing on the
// other.
var plainClient = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// filesCmd serves a directory of saved documents with net/http's
// FileServer: a URI's query is part of its file's name, as readAll saved
// it.
func filesCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("files", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory of saved documents")
	listen := fs.String("listen", "127.0.0.1:18282", "address to serve on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return errors.New("files: -dir is required and takes no arguments")
	}
	files := http.FileServer(http.Dir(*dir))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			r = r.Clone(r.Context())
			r.URL.Path += "?" + r.URL.RawQuery
			r.URL.RawQuery = ""
		}
		files.ServeHTTP(w, r)
	})
	return serveUntil(ctx, *listen, h)
}

// serveUntil serves h on listen until ctx ends.
func serveUntil(ctx context.Context, listen string, h http.Handler) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	slog.Info("serving", "url", "http://"+ln.Addr().String()+"/")
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
