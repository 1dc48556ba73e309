package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"
)

// TestProxyPassesBytesLate sends a body through the proxy to an echo
// server and back: it must come back whole and unchanged, and never
// sooner than the handshake and the two legs each way allow (a lower
// bound, which a busy machine only makes later).
func TestProxyPassesBytesLate(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	const delay = 30 * time.Millisecond
	go accept(front, echo.Addr().String(), delay)

	body := make([]byte, 1<<20)
	rand.Read(body)
	start := time.Now()
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		c.Write(body)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("got %d bytes back, want the %d sent, unchanged", len(got), len(body))
	}
	// Handshake (2 x delay), then there and back (2 x delay).
	if took := time.Since(start); took < 4*delay {
		t.Errorf("the echo came back after %s, sooner than the %s the delays add", took, 4*delay)
	}
}
