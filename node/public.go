package node

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/viaduct-mirror/viaduct/republish"
)

// startPublic serves the public listener: the republished Source only
// (documents, bitstreams, Dumps, the hub, provenance) and the callbacks
// of upstream notifications. Nothing an operator uses is served here.
func (n *Node) startPublic(ctx context.Context, repub *republish.Server, dumps *republish.Dumps, opts Options) error {
	mux := http.NewServeMux()
	n.roles.mount(mux)
	n.note.mount(mux)
	mountDumps(mux, dumps)
	mux.Handle("/", repub.Handler())
	n.http = &http.Server{
		Handler:           publicHandler(mux, opts),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          n.httpErrorLog(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	n.spawn("http", func() error {
		if err := n.http.Serve(n.ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

func (n *Node) httpErrorLog() *log.Logger {
	return slog.NewLogLogger(n.log.Handler(), slog.LevelWarn)
}
