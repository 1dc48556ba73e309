package public

import (
	"net"
	"syscall"
)

// pending reports whether bytes the peer sent wait unread in conn's
// socket. It peeks without blocking through Control, which takes no read
// lock, so it answers while the server's own Read is parked on the same
// connection. A connection that cannot be asked counts as not pending.
func pending(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var waiting bool
	var b [1]byte
	raw.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		waiting = err == nil && n > 0
	})
	return waiting
}
