package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/viaduct-mirror/viaduct/fetch"
	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// roles are the node's active parts: the harvester that reads upstream
// Sources and the fetch workers that copy their bitstreams.
type roles struct {
	client *upstream.Client
	harv   *harvester.Harvester
	pool   *fetch.Pool
	push   *harvester.Push
	leases *harvester.SourceLeases
}

func startRoles(ctx context.Context, n *Node, opts Options) (*roles, error) {
	ucfg := n.cfg.Upstream
	if ucfg.UserAgent == "" || ucfg.UserAgent == upstream.DefaultUserAgent("dev") {
		ucfg.UserAgent = upstream.DefaultUserAgent(opts.Version)
	}
	client, err := upstream.New(ucfg, upstream.Options{Registerer: n.reg, Logger: n.log.With("role", "upstream"), TracerProvider: opts.TracerProvider})
	if err != nil {
		return nil, fmt.Errorf("starting upstream client: %w", err)
	}
	r := &roles{client: client}
	fp := &fetchProgress{}
	if r.leases, err = harvester.StartLeases(ctx, n.q, n.cat, len(n.cfg.Sources), n.log.With("role", "harvester")); err != nil {
		client.Close()
		return nil, err
	}
	r.harv, err = harvester.New(n.cfg.Harvest, n.cfg.Sources, harvester.Deps{
		Client:    client,
		Upstream:  ucfg,
		Cursors:   r.leases,
		Leases:    r.leases,
		Held:      n.cat,
		Publisher: n.q,
		// A Source's dead letters come back after its passes that end well.
		DeadLetters: n.q,
		// Bitstreams from Dump packages are stored before their changes
		// are queued; packages are spooled under the data directory.
		Blobs:          n.blobs,
		SpoolDir:       filepath.Join(n.cfg.DataDir, "tmp"),
		TracerProvider: opts.TracerProvider,
		Progress:       fp,
		OnProgress:     opts.OnProgress,
	}, n.log.With("role", "harvester"), n.reg)
	if err != nil {
		client.Close()
		return nil, err
	}
	changes, err := n.q.Changes(ctx)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("consuming changes: %w", err)
	}
	r.pool, err = fetch.New(n.cfg.Fetch, fetch.Deps{
		Changes: changes,
		Blobs:   n.blobs,
		Events:  n.q,
		Catalog: n.cat,
		Client:  r.harv.Client,

		TracerProvider: opts.TracerProvider,
	}, n.log.With("role", "fetch"), n.reg)
	if err != nil {
		client.Close()
		return nil, err
	}
	r.pool.Declare(r.harv.Sources()...)
	fp.pool = r.pool
	if r.push, err = startPush(ctx, n, r.harv); err != nil {
		client.Close()
		return nil, err
	}
	n.keep(ctx, "fetch", func(ctx context.Context) error { return ignoreCanceled(r.pool.Run(ctx)) })
	n.keep(ctx, "harvester", func(ctx context.Context) error { return ignoreCanceled(r.harv.Run(ctx)) })
	// A started node takes a pass asked for at once (a node stopped
	// meanwhile stops waiting).
	select {
	case <-r.harv.Started():
	case <-ctx.Done():
	}
	return r, nil
}

// mount adds the roles' public endpoints: the callbacks of the
// notifications the harvester subscribed to.
func (r *roles) mount(mux *http.ServeMux) {
	mountPush(mux, r.push)
}

func (r *roles) close() error {
	return errors.Join(closePush(r.push), r.harv.Close(), r.pool.Close(), r.leases.Close(), r.client.Close())
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
