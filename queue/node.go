package queue

import (
	"crypto/rand"
	"encoding/hex"
	"os"
)

// defaultNodeName is the host name and a random suffix: unique at every
// start, so that a restarted node never mistakes a lease of its previous
// life for its own.
func defaultNodeName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "viaduct"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}

// NodeName is the name this node holds leases under.
func (q *Queue) NodeName() string { return q.cfg.NodeName }
