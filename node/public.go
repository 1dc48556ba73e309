package node

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/telemetry"
	"github.com/viaduct-mirror/viaduct/public"
	"github.com/viaduct-mirror/viaduct/republish"
)

// startPublic serves the public listener: the republished Source only
// (documents, bitstreams, Dumps, the hub, provenance) and the callbacks
// of upstream notifications. Nothing an operator uses is served here.
func (n *Node) startPublic(ctx context.Context, repub *republish.Server, dumps *republish.Dumps, opts Options) error {
	mux := http.NewServeMux()
	n.roles.mount(mux)
	n.note.Mount(mux)
	mountDumps(mux, dumps)
	// A proxy or an orchestrator checks the port it sends requests to:
	// the probes answer here too, by status code only (the reasons are
	// on the admin listener). /healthz is the liveness probe's old name.
	probe := publicProbes(n.ready)
	mux.Handle("GET /livez", probe)
	mux.Handle("GET /readyz", probe)
	mux.Handle("GET /healthz", probe)
	mux.Handle("/", repub.Handler())
	n.http = &http.Server{
		Handler:           telemetry.Handler(mux, opts.TracerProvider),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          n.httpErrorLog(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	n.ln = public.Harden(n.http, n.ln, n.cfg.Public, public.Routes{Expensive: republish.Expensive, Kind: routeKind}, n.log.With("role", "http"), n.reg)
	n.spawn("http", func() error {
		if err := n.http.Serve(n.ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

// publicProbes answers /livez (and /healthz) and /readyz with a status
// code and one word, never the conditions' reasons.
func publicProbes(r *Readiness) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if req.URL.Path != "/readyz" {
			w.Write([]byte("ok\n"))
			return
		}
		if ok, _ := r.Check(req.Context()); !ok {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
}

func (n *Node) httpErrorLog() *log.Logger {
	return slog.NewLogLogger(n.log.Handler(), slog.LevelWarn)
}
