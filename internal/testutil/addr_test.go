package testutil

import (
	"net"
	"strconv"
	"testing"
)

func TestFixedAddrListensAgain(t *testing.T) {
	addr := FixedAddr(t)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("%s is not a loopback address", addr)
	}
	if p, _ := strconv.Atoi(port); p < 1024 || p >= 32768 {
		t.Errorf("port %d is not below the ephemeral range", p)
	}
	for range 2 {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on %s: %v", addr, err)
		}
		ln.Close()
	}
}
