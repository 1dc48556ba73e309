package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/viaduct-mirror/viaduct/republish"
)

// startDumps publishes each collection's Resource Dump and Change Dump
// when republish.dumps.enabled is set: the builder runs until the node's
// run context ends, packages go to the node's blob store and their
// description to the catalog. It mounts, on mux, the Dump documents and
// packages and the operator's POST /admin/dumps/{collection}, which
// rebuilds a collection's Dumps now and answers when they are served.
func startDumps(ctx context.Context, n *Node, repub *republish.Server, mux *http.ServeMux) error {
	if !n.cfg.Republish.Dumps.Enabled {
		return nil
	}
	d, err := republish.NewDumps(ctx, repub, n.blobs, republish.StateFromSQLite(n.cat), n.log.With("role", "dumps"))
	if err != nil {
		return fmt.Errorf("starting dumps: %w", err)
	}
	n.spawn("dumps", func() error { return d.Run(ctx) })
	h := d.Handler()
	mux.Handle("GET /{collection}/resourcedump.xml", h)
	mux.Handle("GET /{collection}/changedump.xml", h)
	mux.Handle("GET /{collection}/dumps/{file}", h)
	mux.HandleFunc("POST /admin/dumps/{collection}", func(w http.ResponseWriter, r *http.Request) {
		err := d.Rebuild(r.Context(), r.PathValue("collection"))
		switch {
		case errors.Is(err, republish.ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.Write([]byte("ok\n"))
		}
	})
	return nil
}
