package testutil

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

// FixedAddr is a loopback address a test may listen on, close, and
// listen on again, as a server restarted at its published URL does. A
// port the kernel chose (port 0) returns to the ephemeral range when it
// is closed, where the next listener on port 0 or outgoing connection of
// any process may be handed it before the restart. FixedAddr's port lies
// below Linux's ephemeral range (net.ipv4.ip_local_port_range, 32768 to
// 60999 unless lowered), so the kernel hands it to nobody, and its address
// is one of 127/8 chosen at random, so that tests choosing at the same
// time do not meet.
func FixedAddr(t testing.TB) string {
	t.Helper()
	const lo, hi = 10000, 32767
	var last error
	for range 20 {
		ip := net.IPv4(127, byte(1+rand.IntN(254)), byte(rand.IntN(256)), byte(1+rand.IntN(254)))
		addr := net.JoinHostPort(ip.String(), strconv.Itoa(lo+rand.IntN(hi-lo+1)))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			last = err
			continue
		}
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		return addr
	}
	t.Fatalf("no free loopback address below the ephemeral ports: %v", last)
	return ""
}
