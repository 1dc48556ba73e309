package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/node"
	"github.com/viaduct-mirror/viaduct/sim"
)

// settleTimeout bounds the initial synchronisation before measuring.
const settleTimeout = 2 * time.Minute

// runExperiment runs one cell: a simulated Source behind a byte counter, a
// node A synchronising from it in the experiment's mode, a node B
// synchronising from A (by polling A's Change Lists, or by A's hub in
// push mode) behind a byte counter of its own. Once both hold the Source,
// the Source changes at its interval for Rounds synchronisation intervals
// while both are observed.
func runExperiment(ctx context.Context, e experiment) (outcome, error) {
	dir, err := os.MkdirTemp("", "viaduct-paper-")
	if err != nil {
		return outcome{}, err
	}
	defer os.RemoveAll(dir)

	rate := 1 / e.real(e.ChangeInterval).Seconds()
	src, err := sim.New(sim.Config{Resources: e.Size, Seed: 7, MinSize: 1, MaxSize: 1024, Rate: rate,
		NoChangeLists: e.Mode == "baseline", Period: time.Hour})
	if err != nil {
		return outcome{}, err
	}
	srcFront, err := newCounter()
	if err != nil {
		return outcome{}, err
	}
	defer srcFront.Close()
	if err := src.SetBaseURL(srcFront.URL); err != nil {
		return outcome{}, err
	}
	srcFront.Forward(src.Handler())
	if e.Mode == "push" {
		hub, err := sim.StartHub(ctx, src, sim.HubConfig{Window: 5 * time.Millisecond}, nil)
		if err != nil {
			return outcome{}, err
		}
		defer hub.Close()
	}

	aFront, err := newCounter()
	if err != nil {
		return outcome{}, err
	}
	defer aFront.Close()
	// A listens on an address of its own and is reached only through
	// aFront, the URL its documents name.
	aAddr, err := freeAddr()
	if err != nil {
		return outcome{}, err
	}
	aFront.ForwardTo("http://" + aAddr)
	a, err := startNode(ctx, e, dir+"/a", aAddr, aFront.URL, source("s", srcFront.URL+"/.well-known/resourcesync", e))
	if err != nil {
		return outcome{}, err
	}
	defer a.Close()
	b, err := startNode(ctx, e, dir+"/b", "127.0.0.1:0", "", source("a", aFront.URL+"/.well-known/resourcesync", e))
	if err != nil {
		return outcome{}, err
	}
	defer b.Close()

	obsA := &observer{src: src, cat: a.Catalog(), source: "s"}
	obsB := &observer{src: src, cat: b.Catalog(), source: "a", byOrigin: true}
	if err := waitConsistent(ctx, obsA, obsB); err != nil {
		return outcome{}, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	srcFront.Reset()
	aFront.Reset()
	since := time.Now()
	go src.Run(runCtx)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	end := time.After(time.Duration(e.Rounds) * e.real(e.SyncInterval))
	for done := false; !done; {
		select {
		case <-ctx.Done():
			return outcome{}, ctx.Err()
		case <-end:
			done = true
		case <-tick.C:
		}
		changes := src.ChangesSince(since)
		if err := obsA.sample(ctx, changes); err != nil {
			return outcome{}, err
		}
		if err := obsB.sample(ctx, changes); err != nil {
			return outcome{}, err
		}
	}
	cancel()
	changes := src.ChangesSince(since)
	reqA, err := obsA.requiredBytes(ctx, changes)
	if err != nil {
		return outcome{}, err
	}
	reqB, err := obsB.requiredBytes(ctx, changes)
	if err != nil {
		return outcome{}, err
	}
	return outcome{
		experiment: e,
		A:          obsA.metrics(reqA, srcFront.Bytes(), srcFront.DocumentBytes()),
		B:          obsB.metrics(reqB, aFront.Bytes(), aFront.DocumentBytes()),
	}, nil
}

// sampleEvery is how often consistency is sampled; it bounds the
// resolution of the latencies measured.
const sampleEvery = 100 * time.Millisecond

// waitConsistent waits until every observer's copy matches the Source.
func waitConsistent(ctx context.Context, obs ...*observer) error {
	deadline := time.Now().Add(settleTimeout)
	for {
		ok := true
		for _, o := range obs {
			c, err := o.consistency(ctx)
			if err != nil {
				return err
			}
			ok = ok && c == 1
		}
		if ok {
			for _, o := range obs {
				o.reset()
			}
			return nil
		}
		if time.Now().After(deadline) {
			var got []string
			for _, o := range obs {
				c, _ := o.consistency(ctx)
				got = append(got, fmt.Sprintf("%s %.3f", o.name(), c))
			}
			return &notSettled{fmt.Sprintf("the Destinations did not reach the Source's state within %v (consistency: %s)", settleTimeout, strings.Join(got, ", "))}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sampleEvery):
		}
	}
}

// source is the configuration of the Source a node synchronises from.
func source(name, url string, e experiment) harvester.SourceConfig {
	yes, notify := true, e.Mode == "push"
	return harvester.SourceConfig{Name: name, URL: url, Schedule: fmt.Sprintf("@every %v", e.real(e.SyncInterval)),
		AllowLoopback: &yes, DeleteMissing: &yes, Notify: &notify}
}

// startNode starts a viaduct node on loopback whose politeness limits do
// not stand between it and the Source: the paper measures the model, not
// a rate limit.
func startNode(ctx context.Context, e experiment, dir, listen, publicURL string, s harvester.SourceConfig) (*node.Node, error) {
	cfg := node.Defaults()
	cfg.DataDir = dir
	cfg.Listen = listen
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Admin.AllowNoTokenOnLoopback = true
	cfg.PublicURL = publicURL
	cfg.Sources = []harvester.SourceConfig{s}
	cfg.Upstream.AllowLoopback = true
	cfg.Upstream.PerHostRate = 1e6
	cfg.Upstream.PerHostBurst = 1e6
	cfg.Upstream.PerHostConcurrency = 32
	cfg.Harvest.QuietWindow = time.Hour
	cfg.Harvest.PushSchedule = "@every 1h"
	cfg.Fetch.Workers = 32
	cfg.Republish.ChangeListPeriod = time.Hour
	// B subscribes to A's hub from loopback, which a hub refuses by
	// default; refused, B would poll A at its schedule instead.
	cfg.Republish.Notify.AllowLoopbackCallbacks = true
	cfg.Fill()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return node.Start(ctx, cfg, node.Options{Version: "paper", Logger: nodeLog.With("node", s.Name, "experiment", e.String())})
}

// freeAddr is a loopback address no one listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// notSettled is the error of a run whose Destinations never held the
// Source's state before the measurement.
type notSettled struct{ why string }

func (e *notSettled) Error() string { return e.why }
