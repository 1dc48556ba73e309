package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/harvester"
	"github.com/viaduct-mirror/viaduct/queue"
)

// Harvester is what the admin side asks of the harvester.
type Harvester interface {
	Status(ctx context.Context) []harvester.SourceStatus
	SourceStatus(ctx context.Context, name string) (harvester.SourceStatus, bool)
	Trigger(name string, rebaseline bool) (req *harvester.Request, merged bool, err error)
}

// DeadLetters is what the admin side asks of the queue.
type DeadLetters interface {
	ListDeadLetters(ctx context.Context, q queue.DeadQuery) ([]queue.DeadLetter, error)
	DeadLetterAt(ctx context.Context, seq uint64) (queue.DeadLetter, error)
	DeadLetterCounts(ctx context.Context) (map[string]uint64, error)
	RetryDeadLetter(ctx context.Context, seq uint64) (queue.DeadLetter, error)
	RetryDeadLetters(ctx context.Context, source string) (int, error)
	PurgeDeadLetter(ctx context.Context, seq uint64) error
	PurgeDeadLetters(ctx context.Context, source string) (uint64, error)
}

// Dumps rebuilds a collection's Dumps.
type Dumps interface {
	Rebuild(ctx context.Context, collection string) error
}

// The queue is what New is given in production.
var _ DeadLetters = (*queue.Queue)(nil)

// Deps are the parts of the node the admin side reads and acts on.
type Deps struct {
	Harvester   Harvester
	DeadLetters DeadLetters
	// Dumps is nil when the node builds no Dumps.
	Dumps Dumps
	// Reload reads the configuration file again and applies what can
	// change without a restart.
	Reload func(ctx context.Context) (any, error)
	// Node reports the node as a whole for the status page.
	Node func(ctx context.Context) NodeInfo
	// Gatherer is the node's metrics registry: the counts per Source come
	// from it, so the page never disagrees with /metrics.
	Gatherer prometheus.Gatherer
	// Health serves /livez and /readyz, which need no token.
	Health http.Handler
	// Metrics serves /metrics.
	Metrics http.Handler
	// Backup serves POST /admin/backup: a tar of the node's backup.
	Backup http.Handler
}

// Server is the admin listener's handler.
type Server struct {
	cfg   Config
	token string
	deps  Deps
	log   *slog.Logger
	dumps *coalescer
	mux   *http.ServeMux
}

// New builds the admin handler; the token is read now, once.
func New(cfg Config, deps Deps, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tok, err := cfg.Token()
	if err != nil {
		return nil, err
	}
	if tok == "" && !cfg.AllowNoTokenOnLoopback {
		log.Warn("no admin token configured: the admin API refuses every request", "fix", "set admin.token_file or "+TokenEnv)
	}
	s := &Server{cfg: cfg, token: tok, deps: deps, log: log, dumps: newCoalescer(), mux: http.NewServeMux()}
	s.routes()
	return s, nil
}

// ServeHTTP serves the admin listener.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	if s.deps.Health != nil {
		s.mux.Handle("GET /livez", s.deps.Health)
		s.mux.Handle("GET /readyz", s.deps.Health)
	}
	auth := func(pattern string, h http.HandlerFunc) { s.mux.Handle(pattern, s.authorize(h)) }
	if s.deps.Metrics != nil {
		s.mux.Handle("GET /metrics", s.authorize(s.deps.Metrics))
	}
	auth("GET /debug/pprof/", pprof.Index)
	auth("GET /debug/pprof/cmdline", pprof.Cmdline)
	auth("GET /debug/pprof/profile", pprof.Profile)
	auth("GET /debug/pprof/symbol", pprof.Symbol)
	auth("GET /debug/pprof/trace", pprof.Trace)

	auth("GET /{$}", s.statusPage)
	auth("GET /admin/status", s.nodeStatus)
	auth("GET /admin/sources", s.listSources)
	auth("GET /admin/sources/{source}", s.showSource)
	auth("POST /admin/sources/{source}/sync", s.syncSource(false))
	auth("POST /admin/sources/{source}/rebaseline", s.syncSource(true))
	auth("GET /admin/deadletters", s.listDead)
	auth("GET /admin/deadletters/{seq}", s.showDead)
	auth("POST /admin/deadletters/{seq}/retry", s.retryDead)
	auth("DELETE /admin/deadletters/{seq}", s.purgeDead)
	auth("POST /admin/deadletters/retry", s.retryDeadAll)
	auth("POST /admin/deadletters/purge", s.purgeDeadAll)
	auth("POST /admin/dumps/{collection}", s.rebuildDumps)
	auth("POST /admin/reload", s.reload)
	if s.deps.Backup != nil {
		s.mux.Handle("POST /admin/backup", s.authorize(s.deps.Backup))
	}
	s.mux.Handle("/", s.authorize(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, errNoRoute))
	})))
}

var (
	errNoRoute    = errors.New("no such admin endpoint (see docs/operations.md)")
	errBadRequest = errors.New("bad request")
)

type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// writeError is where admin errors become HTTP status codes.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, harvester.ErrNoSource), errors.Is(err, queue.ErrDeadLetterNotFound), errors.Is(err, errNoRoute), errors.Is(err, errNotFound):
		code = http.StatusNotFound
	case errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, harvester.ErrNotRunning), errors.Is(err, errUnavailable):
		code = http.StatusServiceUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		code = http.StatusGatewayTimeout
	case errors.Is(err, errPassFailed):
		code = http.StatusBadGateway
	}
	writeJSON(w, code, errorBody{Error: err.Error()})
}

var (
	errNotFound    = errors.New("not found")
	errUnavailable = errors.New("not available on this node")
	errPassFailed  = errors.New("pass failed")
)

// requestTimeout bounds what an admin request waits for (a pass asked
// with ?wait, a dump rebuild).
const requestTimeout = 2 * time.Hour
