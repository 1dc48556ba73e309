package node

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Restart backoff of a role that stopped on an error: the first wait, the
// longest, and how long a role must run before it counts as recovered
// (its fault cleared, its backoff started over).
const (
	restartFirst   = 500 * time.Millisecond
	restartMax     = 30 * time.Second
	restartHealthy = 10 * time.Second
)

// roleFaults are the roles that stopped on an error and have not yet run
// restartHealthy since: while there is one, the node is not ready, and
// each says why.
type roleFaults struct {
	mu     sync.Mutex
	faults map[string]string
}

func (f *roleFaults) set(role string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.faults == nil {
		f.faults = map[string]string{}
	}
	if err == nil {
		delete(f.faults, role)
		return
	}
	f.faults[role] = err.Error()
}

// roleFault records role's fault (nil: none) where RoleFaults and the
// readiness probe (/readyz, condition "role <name>") see it.
func (n *Node) roleFault(role string, err error) {
	n.faults.set(role, err)
	if n.ready == nil {
		return
	}
	if err != nil {
		n.ready.Set("role "+role, false, "stopped, restarting: "+err.Error())
	} else {
		n.ready.Set("role "+role, true, "")
	}
}

// RoleFaults names the roles that stopped on an error and are being
// restarted, each with its last error; empty when every role runs.
func (n *Node) RoleFaults() map[string]string {
	n.faults.mu.Lock()
	defer n.faults.mu.Unlock()
	out := make(map[string]string, len(n.faults.faults))
	for k, v := range n.faults.faults {
		out[k] = v
	}
	return out
}

// keep runs the role f until ctx ends. When f stops on an error (a full
// disk, the blob store or NATS unavailable), the node logs it, reports the
// role's fault (see RoleFaults; the node is not ready meanwhile) and runs
// f again after a backoff, from
// restartFirst doubling up to restartMax, so that the role resumes by
// itself once the fault clears; f must start from durable state each time
// (the applier from the catalog's last applied sequence). A role that has
// run restartHealthy without stopping has its fault cleared.
func (n *Node) keep(ctx context.Context, name string, f func(context.Context) error) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		wait := restartFirst
		for {
			healthy := time.AfterFunc(restartHealthy, func() { n.roleFault(name, nil) })
			start := time.Now()
			err := f(ctx)
			healthy.Stop()
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = fmt.Errorf("%s stopped", name)
			}
			if time.Since(start) >= restartHealthy {
				wait = restartFirst
			}
			n.roleFault(name, err)
			n.log.Error("role stopped; restarting", "role", name, "err", err, "in", wait)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wait = min(2*wait, restartMax)
		}
	}()
}
