package queuetest

import (
	"fmt"
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
//
// Every server binds its own ports (port -1): a port chosen free and
// closed before the server binds it can be taken meanwhile by any other
// process's connection on a busy machine, and the server then never
// becomes ready. So the routes are learnt as the servers start: each
// routes to the cluster addresses of those started before it, and the
// servers tell each other of the rest.
func StartCluster(t testing.TB, size int) *Cluster {
	t.Helper()
	c := &Cluster{}
	var routes []string
	for i := range size {
		opts := &server.Options{
			ServerName:         fmt.Sprintf("nats-%d", i+1),
			Host:               "127.0.0.1",
			Port:               -1,
			JetStream:          true,
			StoreDir:           t.TempDir(),
			JetStreamMaxMemory: 256 << 20,
			JetStreamMaxStore:  4 << 30,
			Cluster:            server.ClusterOpts{Name: "viaduct-test", Host: "127.0.0.1", Port: -1},
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
		routes = append(routes, "nats://"+s.ClusterAddr().String())
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
