package queuetest

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is several nats-servers with JetStream clustered in the test's
// process on loopback, each storing in its own t.TempDir(): streams and
// buckets at 3 replicas survive one server's loss.
type Cluster struct {
	Servers []*server.Server
}

// StartCluster starts size servers routed to each other and waits until
// every one of them sees the JetStream meta leader. Servers still running
// are shut down by t.Cleanup.
func StartCluster(t testing.TB, size int) *Cluster {
	t.Helper()
	ports := make([]int, size)
	for i := range ports {
		ports[i] = freePort(t)
	}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	c := &Cluster{}
	for i := range size {
		opts := &server.Options{
			ServerName:         fmt.Sprintf("nats-%d", i+1),
			Host:               "127.0.0.1",
			Port:               -1,
			JetStream:          true,
			StoreDir:           t.TempDir(),
			JetStreamMaxMemory: 256 << 20,
			JetStreamMaxStore:  4 << 30,
			Cluster:            server.ClusterOpts{Name: "viaduct-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:             server.RoutesFromStr(strings.Join(routes, ",")),
			NoSigs:             true,
			NoLog:              true,
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatalf("queuetest: configure cluster server %d: %v", i+1, err)
		}
		s.Start()
		t.Cleanup(func() {
			s.Shutdown()
			s.WaitForShutdown()
		})
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatalf("queuetest: cluster server %d not ready", i+1)
		}
		c.Servers = append(c.Servers, s)
	}
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !c.ready() {
		if time.Now().After(deadline) {
			t.Fatal("queuetest: the JetStream cluster elected no meta leader in 60s")
		}
		<-tick.C
	}
	return c
}

// ready: every server routes to all the others, and the meta leader
// counts every server online, so that a stream at as many replicas as
// servers can be placed.
func (c *Cluster) ready() bool {
	var leader *server.Server
	for _, s := range c.Servers {
		if s.NumRoutes() < len(c.Servers)-1 || !s.JetStreamIsClustered() || !s.JetStreamIsCurrent() {
			return false
		}
		if s.JetStreamIsLeader() {
			leader = s
		}
	}
	return leader != nil && len(leader.JetStreamClusterPeers()) == len(c.Servers)
}

// URL lists every server's client address, as a node's queue.url does.
func (c *Cluster) URL() string {
	var urls []string
	for _, s := range c.Servers {
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",")
}

// Stop shuts server i down, as a crashed NATS server would leave the
// cluster.
func (c *Cluster) Stop(i int) {
	c.Servers[i].Shutdown()
	c.Servers[i].WaitForShutdown()
}

// freePort is a loopback port nobody listens on right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("queuetest: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
