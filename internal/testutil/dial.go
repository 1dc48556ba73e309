package testutil

import (
	"net"
	"syscall"
	"time"
)

// DialFrom connects to addr from the loopback address from (Linux answers
// on all of 127/8), so that each simulated client has an address of its
// own; rcvbuf, when positive, shrinks the receive buffer so that a reader
// that stops reading stalls the server's writes at once.
func DialFrom(from, addr string, rcvbuf int) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
			if err != nil {
				return err
			}
			return serr
		}
	}
	return d.Dial("tcp", addr)
}
