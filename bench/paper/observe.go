package main

import (
	"context"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/sim"
)

// observer compares a node's catalog with the Source, as the paper's
// metrics do: consistency is the share of resources whose copy is in sync
// with their lead state at a moment; latency is how long after a change
// at the Source its copy got in sync.
type observer struct {
	src    *sim.Source
	cat    *catalog.Catalog
	source string
	// byOrigin matches the catalog's resources to the Source by their
	// origin URI (a node downstream of another), not by their URI.
	byOrigin bool

	consistencies []float64
	// pending is, per URI, the time of the earliest change not yet in sync.
	pending   map[string]time.Time
	seen      int // changes of the run already entered in pending
	latencies []time.Duration
}

func (o *observer) name() string {
	if o.byOrigin {
		return "B"
	}
	return "A"
}

func (o *observer) reset() {
	o.consistencies, o.latencies, o.pending, o.seen = nil, nil, map[string]time.Time{}, 0
}

// copies reads the node's copy: sha-256 by the Source's URI, live ones.
func (o *observer) copies(ctx context.Context) (map[string]string, error) {
	held := map[string]string{}
	// Each Source here has the collection of its name (the default).
	err := o.cat.SourceResources(ctx, o.source, o.source, func(r *catalog.Resource) error {
		if !r.Deleted {
			uri := r.URI
			if o.byOrigin {
				uri = r.Origin
			}
			held[uri] = r.SHA256
		}
		return nil
	})
	return held, err
}

// inSync returns, per URI of the Source's or the copy's live resources,
// whether the copy matches the lead state.
func (o *observer) inSync(ctx context.Context) (map[string]bool, error) {
	held, err := o.copies(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(held))
	for uri, it := range o.src.Snapshot() {
		sha, ok := held[uri]
		switch {
		case it.Deleted && !ok:
			continue // gone at both ends: not a resource of either
		case it.Deleted:
			out[uri] = false
		default:
			out[uri] = ok && sha == it.SHA256
		}
		delete(held, uri)
	}
	for uri := range held {
		out[uri] = false // held but never at the Source
	}
	return out, nil
}

func (o *observer) consistency(ctx context.Context) (float64, error) {
	s, err := o.inSync(ctx)
	if err != nil {
		return 0, err
	}
	return share(s), nil
}

func share(s map[string]bool) float64 {
	if len(s) == 0 {
		return 1
	}
	n := 0
	for _, ok := range s {
		if ok {
			n++
		}
	}
	return float64(n) / float64(len(s))
}

// sample records the consistency now, enters the run's new changes as
// pending and settles the pending ones whose copy is now in sync.
func (o *observer) sample(ctx context.Context, changes []sim.Change) error {
	now := time.Now()
	s, err := o.inSync(ctx)
	if err != nil {
		return err
	}
	o.consistencies = append(o.consistencies, share(s))
	for _, c := range changes[o.seen:] {
		if _, ok := o.pending[c.URI]; !ok {
			o.pending[c.URI] = c.Time
		}
	}
	o.seen = len(changes)
	for uri, t := range o.pending {
		ok, listed := s[uri]
		if ok || !listed { // in sync, or deleted at both ends
			o.latencies = append(o.latencies, now.Sub(t))
			delete(o.pending, uri)
		}
	}
	return nil
}

// requiredBytes is what the Destination had to transfer at the least for
// what it holds in sync at the end: the bytes of the last version of
// every resource created or updated, not deleted, during the run, and in
// sync now. Versions overwritten before they could be read are not
// required, nor is anything for a deletion; a change not yet copied is
// left out of both sides of the ratio's numerator.
func (o *observer) requiredBytes(ctx context.Context, changes []sim.Change) (int64, error) {
	s, err := o.inSync(ctx)
	if err != nil {
		return 0, err
	}
	last := map[string]sim.Change{}
	for _, c := range changes {
		last[c.URI] = c
	}
	var n int64
	for uri, c := range last {
		if c.Op != "deleted" && s[uri] {
			n += c.Length
		}
	}
	return n, nil
}

// metrics are the paper's three figures for one Destination.
type metrics struct {
	Consistency float64 // mean of the samples, 0..1
	Latency     time.Duration
	Settled     int     // changes whose latency was measured
	Unsynced    int     // changes still not in sync at the end
	Efficiency  float64 // required bytes / bytes transferred
	Required    int64   // bytes of the changed resources' last versions
	Transferred int64
	Documents   int64 // of Transferred, the ResourceSync documents'
}

func (o *observer) metrics(required, transferred, documents int64) metrics {
	m := metrics{Unsynced: len(o.pending), Settled: len(o.latencies), Required: required, Transferred: transferred, Documents: documents}
	for _, c := range o.consistencies {
		m.Consistency += c
	}
	if len(o.consistencies) > 0 {
		m.Consistency /= float64(len(o.consistencies))
	}
	var sum time.Duration
	for _, l := range o.latencies {
		sum += l
	}
	if len(o.latencies) > 0 {
		m.Latency = sum / time.Duration(len(o.latencies))
	}
	if transferred > 0 {
		m.Efficiency = float64(required) / float64(transferred)
	}
	return m
}
