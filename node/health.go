package node

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Readiness is the node's readiness registry: named conditions, each
// ready or not with a reason. /readyz is ready when every condition is.
// A role sets its own condition (Set) when something it notices makes the
// node unfit to serve, such as a storage error, and clears it when that
// has passed; a probe (Probe) is asked on each request instead, for what
// is cheap to check then (the NATS connection, the blob store). It is
// safe for concurrent use.
type Readiness struct {
	mu     sync.Mutex
	set    map[string]Condition
	probes map[string]func(context.Context) error
}

// Condition is one named condition of readiness.
type Condition struct {
	Name   string `json:"name"`
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
}

// NewReadiness returns an empty registry: ready.
func NewReadiness() *Readiness {
	return &Readiness{set: map[string]Condition{}, probes: map[string]func(context.Context) error{}}
}

// Set records the named condition; reason says why it is not ready.
func (r *Readiness) Set(name string, ready bool, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.set[name] = Condition{Name: name, Ready: ready, Reason: reason}
}

// Probe registers a check asked on every readiness request: the node is
// not ready while it returns an error, whose text is the reason.
func (r *Readiness) Probe(name string, check func(context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.probes[name] = check
}

// Check evaluates every condition, in name order, and reports whether all
// are ready.
func (r *Readiness) Check(ctx context.Context) (bool, []Condition) {
	r.mu.Lock()
	conds := make([]Condition, 0, len(r.set)+len(r.probes))
	for _, c := range r.set {
		conds = append(conds, c)
	}
	probes := make(map[string]func(context.Context) error, len(r.probes))
	for name, p := range r.probes {
		probes[name] = p
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for name, p := range probes {
		c := Condition{Name: name, Ready: true}
		if err := p(ctx); err != nil {
			c.Ready, c.Reason = false, err.Error()
		}
		conds = append(conds, c)
	}
	slices.SortFunc(conds, func(a, b Condition) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	ok := true
	for _, c := range conds {
		ok = ok && c.Ready
	}
	return ok, conds
}

// probeTimeout bounds one readiness request's probes together.
const probeTimeout = 3 * time.Second

// healthHandler serves /livez (the process answers) and /readyz (every
// condition ready), both as JSON; /readyz answers 503 when not ready.
func healthHandler(r *Readiness) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if req.URL.Path == "/livez" {
			w.Write([]byte(`{"live":true}` + "\n"))
			return
		}
		ok, conds := r.Check(req.Context())
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(struct {
			Ready      bool        `json:"ready"`
			Conditions []Condition `json:"conditions"`
		}{ok, conds})
	})
}
