package republish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/viaduct-mirror/viaduct/storage"
)

// BlobOpener opens a stored bitstream by its key (the sha-256 of its
// bytes). storage.Blobs satisfies it.
type BlobOpener interface {
	Open(ctx context.Context, key string) (storage.Blob, error)
}

var _ BlobOpener = (storage.Blobs)(nil)

// Server serves the aggregator as a ResourceSync Source. Every document is
// computed from the catalog, so any number of replicas, each with its own
// catalog, serve the same documents; the only thing kept between requests
// is the plan of each Resource List Index, for the catalog state it was
// made from (see planCache).
type Server struct {
	cfg   Config
	cat   Catalog
	blobs BlobOpener
	log   *slog.Logger
	m     *metrics
	// colls is the collections served now (see AddCollections).
	colls *collsNow
	// now is the clock, for the rare document that has no change time to
	// date it by (an empty collection).
	now func() time.Time
	// plans keeps each collection's Resource List plan until the
	// catalog changes.
	plans *planCache
	// dumps is the server's Dumps, once NewDumps made them (at start,
	// before the server is shared).
	dumps *Dumps
	// split keeps how closed Change List periods are split.
	split *pieceCache
	// cache keeps rendered lists until the catalog moves; nil: none.
	cache *docCache
}

// New checks cfg and returns a Server reading from cat and blobs. Metrics
// are registered on reg when it is not nil; a nil logger discards.
func New(cfg Config, cat Catalog, blobs BlobOpener, logger *slog.Logger, reg prometheus.Registerer) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cat == nil || blobs == nil {
		return nil, errors.New("republish: a catalog and a blob store are required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("republish: register metrics: %w", err)
	}
	s := &Server{cfg: cfg, cat: cat, blobs: blobs, log: logger, m: m, now: time.Now,
		plans: newPlanCache(), split: &pieceCache{}}
	s.colls = &collsNow{}
	s.colls.cur.Store(newCollSet(cfg, slices.Clone(cfg.Collections)))
	if s.cache, err = newDocCache(s.cfg.Cache); err != nil {
		return nil, err
	}
	return s, nil
}

// Handler returns the HTTP handler serving every document and bitstream
// below the base URL's path.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.route) }

// route dispatches on the escaped path, so that a resource path keeps the
// origin's escaping exactly.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.fail(w, r, "other", fault(methodNotAllowed, nil))
		return
	}
	path := r.URL.EscapedPath()
	switch path {
	case "/", "/index.html":
		s.serveHome(w, r)
		return
	case "/robots.txt":
		s.serveRobots(w, r)
		return
	case "/.well-known/resourcesync":
		s.serveSourceDescription(w, r)
		return
	case "/provenance":
		s.serveProvenance(w, r)
		return
	}
	name, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	col := s.collection(name)
	if col == nil {
		s.fail(w, r, "other", fault(notFound, nil))
		return
	}
	switch {
	case rest == "capabilitylist.xml":
		s.serveCapabilityList(w, r, col)
	case rest == "resourcelist.xml":
		s.serveResourceList(w, r, col)
	case strings.HasPrefix(rest, "resourcelist/"):
		s.serveResourceListPart(w, r, col)
	case rest == "changelist.xml":
		s.serveChangeListIndex(w, r, col)
	case strings.HasPrefix(rest, "changelist/"):
		s.serveChangeList(w, r, col, strings.TrimPrefix(rest, "changelist/"))
	case strings.HasPrefix(rest, "r/"):
		s.serveBitstream(w, r, col)
	case s.isTopic(rest):
		s.serveTopic(w, r, col)
	default:
		s.fail(w, r, "other", fault(notFound, nil))
	}
}

// url returns the absolute URL of a path below the base URL.
func (s *Server) url(path string) string { return s.cfg.BaseURL + path }

func (s *Server) sourceDescriptionURL() string { return s.url("/.well-known/resourcesync") }

func (s *Server) capabilityListURL(c string) string { return s.url("/" + c + "/capabilitylist.xml") }

func (s *Server) resourceListURL(c string) string { return s.url("/" + c + "/resourcelist.xml") }

func (s *Server) changeListIndexURL(c string) string { return s.url("/" + c + "/changelist.xml") }

// ResourceURI returns the aggregator URI of the origin resource origin in
// collection c.
func (s *Server) ResourceURI(c, origin string) (string, error) {
	p, err := resourcePath(c, origin)
	if err != nil {
		return "", err
	}
	return s.url(p), nil
}
