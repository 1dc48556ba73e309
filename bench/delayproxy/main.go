// Command delayproxy puts network latency between a client and servers on
// the same machine: a TCP proxy that delivers every byte a fixed delay
// after it arrived, in each direction, so that a request and its answer
// take twice the delay more than they would (the round trip), and a new
// connection one more round trip before its first byte arrives (the
// handshake a distant server costs). Nothing is read or changed: HTTP
// passes through as bytes.
//
//	delayproxy -listen 127.0.0.1:19100 -to 127.0.0.1:19000 -count 50 -delay 25ms
//
// With -count N it listens on N consecutive ports from -listen's and
// forwards each to the port as far from -to's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/viaduct-mirror/viaduct/bench/internal/ports"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "delayproxy:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("delayproxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:19100", "first address to listen on")
	to := fs.String("to", "127.0.0.1:19000", "first address to forward to")
	count := fs.Int("count", 1, "how many consecutive ports to proxy")
	delay := fs.Duration("delay", 25*time.Millisecond, "one-way delay")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *count < 1 || *delay < 0 {
		return errors.New("takes no arguments; -count at least 1, -delay not negative")
	}
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var wg sync.WaitGroup
	for i := range *count {
		from, err := ports.Plus(*listen, i)
		if err != nil {
			return err
		}
		target, err := ports.Plus(*to, i)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", from)
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		wg.Add(1)
		go func() {
			defer wg.Done()
			accept(ln, target, *delay)
		}()
	}
	slog.Info("delaying", "listen", *listen, "to", *to, "count", *count, "one_way", *delay)
	<-ctx.Done()
	for _, ln := range lns {
		ln.Close()
	}
	wg.Wait()
	return nil
}

func accept(ln net.Listener, target string, delay time.Duration) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go proxy(c.(*net.TCPConn), target, delay)
	}
}

// proxy forwards one connection. The server sees it after the round trip
// a handshake costs; every chunk then reaches the other side delay after
// it was read.
func proxy(client *net.TCPConn, target string, delay time.Duration) {
	defer client.Close()
	time.Sleep(2 * delay)
	c, err := net.Dial("tcp", target)
	if err != nil {
		slog.Warn("dial", "target", target, "err", err)
		return
	}
	server := c.(*net.TCPConn)
	defer server.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pipe(server, client, delay) }()
	go func() { defer wg.Done(); pipe(client, server, delay) }()
	wg.Wait()
}

// chunk is what one read returned, and when.
type chunk struct {
	at   time.Time
	data []byte
	err  error
}

// pipe copies src to dst, each chunk delay after it was read, and closes
// dst for writing after src's end.
func pipe(dst, src *net.TCPConn, delay time.Duration) {
	chunks := make(chan chunk, 256)
	go func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				chunks <- chunk{at: time.Now(), data: buf[:n]}
			}
			if err != nil {
				chunks <- chunk{at: time.Now(), err: err}
				return
			}
		}
	}()
	for ch := range chunks {
		if wait := time.Until(ch.at.Add(delay)); wait > 0 {
			time.Sleep(wait)
		}
		if ch.err != nil {
			if errors.Is(ch.err, io.EOF) {
				dst.CloseWrite()
			} else {
				dst.Close()
			}
			continue
		}
		if _, err := dst.Write(ch.data); err != nil {
			src.Close()
			for range chunks {
			}
			return
		}
	}
}
