package node

import (
	"context"
	"fmt"
	"net/http"

	"github.com/viaduct-mirror/viaduct/republish"
)

// startDumps publishes each collection's Resource Dump and Change Dump
// when republish.dumps.enabled is set: the builder runs until the node's
// run context ends, packages go to the node's blob store and their
// description to the catalog. It returns nil when Dumps are off.
func startDumps(ctx context.Context, n *Node, repub *republish.Server) (*republish.Dumps, error) {
	if !n.cfg.Republish.Dumps.Enabled {
		return nil, nil
	}
	d, err := republish.NewDumps(ctx, repub, n.blobs, republish.StateFromSQLite(n.cat), n.log.With("role", "dumps"))
	if err != nil {
		return nil, fmt.Errorf("starting dumps: %w", err)
	}
	n.spawn("dumps", func() error { return d.Run(ctx) })
	return d, nil
}

// mountDumps serves the Dump documents and packages on the public mux.
func mountDumps(mux *http.ServeMux, d *republish.Dumps) {
	if d == nil {
		return
	}
	h := d.Handler()
	mux.Handle("GET /{collection}/resourcedump.xml", h)
	mux.Handle("GET /{collection}/changedump.xml", h)
	mux.Handle("GET /{collection}/dumps/{file}", h)
}
