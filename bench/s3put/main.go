// Command s3put is the reference for viaduct's S3 benchmarks: a plain
// minio-go loop that PUTs every file of a directory into a fresh bucket,
// with a few concurrent uploaders, and nothing else (no hashing beyond what
// minio-go does, no queue, no catalog). It prints how many objects it put.
//
//	BENCH_S3_KEY=... BENCH_S3_SECRET=... s3put -endpoint 127.0.0.1:9000 -dir SRC/files -bucket b1
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "s3put:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("s3put", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "127.0.0.1:9000", "S3 server, host:port, plain HTTP")
	dir := fs.String("dir", "", "directory whose files are put")
	bucket := fs.String("bucket", "", "bucket to create and fill")
	workers := fs.Int("workers", 32, "concurrent PUTs")
	unsigned := fs.Bool("unsigned", false, "send each body unsigned, bound by its Content-MD5, as viaduct sends small blobs (default: minio-go's chunk-signed body, its choice on plain HTTP)")
	ifNoneMatch := fs.Bool("if-none-match", false, "send each PUT with If-None-Match: * (an object already stored is kept), to measure what the condition costs the server")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *bucket == "" || fs.NArg() > 0 {
		return errors.New("-dir and -bucket are required, and no arguments")
	}
	// Every uploader keeps its connection: minio-go's default transport
	// keeps 16, and a PUT past them would connect and close each time.
	tr, err := minio.DefaultTransport(false)
	if err != nil {
		return err
	}
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = *workers, *workers
	c, err := minio.New(*endpoint, &minio.Options{Creds: credentials.NewStaticV4(os.Getenv("BENCH_S3_KEY"), os.Getenv("BENCH_S3_SECRET"), ""), Transport: tr})
	if err != nil {
		return err
	}
	if err := c.MakeBucket(ctx, *bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("creating bucket %s: %w", *bucket, err)
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", SendContentMd5: *unsigned, DisableContentSha256: *unsigned}
	if *ifNoneMatch {
		opts.SetMatchETagExcept("*")
	}
	paths := make(chan string, 1024)
	var put atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, *workers)
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range paths {
				if err := putFile(ctx, c, *bucket, *dir, p, opts); err != nil {
					errs <- err
					for range paths {
					}
					return
				}
				put.Add(1)
			}
		}()
	}
	walkErr := filepath.WalkDir(*dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths <- p
		}
		return err
	})
	close(paths)
	wg.Wait()
	close(errs)
	if err := errors.Join(append([]error{walkErr}, collect(errs)...)...); err != nil {
		return err
	}
	fmt.Println(put.Load())
	return nil
}

func putFile(ctx context.Context, c *minio.Client, bucket, root, path string, opts minio.PutObjectOptions) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	key, _ := filepath.Rel(root, path)
	_, err = c.PutObject(ctx, bucket, filepath.ToSlash(key), f, st.Size(), opts)
	if err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	return nil
}

func collect(ch <-chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}
