// Package ports names the consecutive loopback addresses the benchmarks
// give a row of Sources (bench/staticsrc serve -count, bench/delayproxy,
// bench/scale sources): the first address, and each next one on the next
// port.
package ports

import (
	"fmt"
	"net"
	"strconv"
)

// Plus is addr with its port moved on by i.
func Plus(addr string, i int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", fmt.Errorf("%s: %w", addr, err)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+i)), nil
}
