package upstream

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// Options are the Client's collaborators, all optional.
type Options struct {
	// Registerer receives the Client's metrics; nil registers none.
	Registerer prometheus.Registerer
	// TracerProvider makes the span of each request; nil uses the global
	// provider.
	TracerProvider trace.TracerProvider
	// Logger receives retries and refusals at debug and warn level; nil
	// discards them.
	Logger *slog.Logger
}

// Request is one GET of an upstream URI on behalf of a Source.
type Request struct {
	URI string
	// Source names the Source in errors, logs and spans.
	Source string
	// ETag and LastModified, from a previous Response, make the GET
	// conditional: an unchanged resource gives a Response with NotModified.
	ETag         string
	LastModified string
	// Gzip asks for a gzip-encoded transfer (documents); otherwise identity
	// is asked for (bitstreams). An answer in an encoding not asked for
	// (gzip when identity was, anything but gzip and identity) is refused
	// with ErrPermanent, never decoded: decoding it would let a Source send
	// a bomb where a few bytes were expected.
	Gzip bool
	// Accept is sent as the Accept header when set.
	Accept string
	// MaxBytes caps the decoded body; 0 means Config.MaxDocumentBytes.
	MaxBytes int64
	// HostWait, when positive, bounds the wait for a slot of the host (and
	// its rate token): past it the request fails with ErrBusy, sending
	// nothing. 0 waits as long as ctx allows.
	HostWait time.Duration
	// Declared, when not nil, is the length the Source declared for the
	// body (a bitstream's rs:md length): a Content-Length above it, or a
	// decoded body running past it, is ErrTooLarge, found at most one byte
	// past the declared length, so that a Source cannot make viaduct read
	// more than it announced.
	Declared *int64
}

// Response is a successful (2xx) or not-modified (304) answer. Its Body
// must be closed: it holds one of the host's concurrency slots.
type Response struct {
	Status int
	Header http.Header
	// Body yields at most the Request's MaxBytes decoded bytes; reading
	// past that, or a body shorter than announced, is an *Error.
	Body io.ReadCloser
	// NotModified is true for a 304 answer to a conditional GET; Body is
	// then empty.
	NotModified bool
	// URI is the URI finally answered, after redirects.
	URI string
	// ETag and LastModified are the validators to send next time.
	ETag         string
	LastModified string
	// Links is the Link header, parsed, targets resolved against URI.
	Links []Link
	// ContentLength is the announced length of Body, -1 if unknown (always
	// -1 when the transfer was gzip-encoded).
	ContentLength int64
	// Attempts is how many attempts the last hop took.
	Attempts int
}

// Client makes GET requests to upstream hosts under a Policy. New returns a
// Client without a Policy, which refuses everything; WithPolicy derives the
// Client of one Source. All Clients derived from one New share connection
// pools, per-host limits and metrics, and are safe for concurrent use.
type Client struct {
	core   *core
	policy *Policy
}

type core struct {
	cfg     Config
	hosts   *hosts
	metrics *metrics
	tracer  trace.Tracer
	log     *slog.Logger

	mu         sync.Mutex
	transports map[addrRule]*http.Transport
}

// New builds a Client from cfg, which it validates.
func New(cfg Config, opts Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &core{
		cfg:        cfg,
		metrics:    m,
		tracer:     tp.Tracer("github.com/viaduct-mirror/viaduct/upstream"),
		log:        log,
		transports: map[addrRule]*http.Transport{},
	}
	c.hosts = newHosts(&c.cfg)
	return &Client{core: c}, nil
}

// WithPolicy returns a Client sharing c's pools and limits that fetches
// under p.
func (c *Client) WithPolicy(p *Policy) *Client {
	return &Client{core: c.core, policy: p}
}

// NewPolicy is the Policy of a Source whose base URI is base, under the
// Client's Config.
func (c *Client) NewPolicy(base string) (*Policy, error) { return NewPolicy(base, c.core.cfg) }

// Policy is the Policy the Client fetches under, nil if none.
func (c *Client) Policy() *Policy { return c.policy }

// Close closes idle connections of every Client sharing c's pools. Requests
// under way are not interrupted; cancel their contexts for that.
func (c *Client) Close() error {
	c.core.mu.Lock()
	defer c.core.mu.Unlock()
	for _, t := range c.core.transports {
		t.CloseIdleConnections()
	}
	return nil
}

// transport returns the Transport for rule, built on first use. It is
// never http.DefaultTransport and never uses a proxy, which would connect
// to addresses the dialer did not check.
func (c *core) transport(rule addrRule) *http.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.transports[rule]; ok {
		return t
	}
	d := newDialer(&c.cfg, rule)
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSHandshakeTimeout:    c.cfg.ConnectTimeout,
		ResponseHeaderTimeout:  c.cfg.ResponseHeaderTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    c.cfg.PerHostConcurrency,
		MaxConnsPerHost:        c.cfg.PerHostConcurrency,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 256 << 10,
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
	}
	c.transports[rule] = t
	return t
}

func (c *Client) errorf(req *Request, uri, op string, kind error, format string, args ...any) *Error {
	return &Error{Source: req.Source, URI: uri, Op: op, Kind: kind, Err: fmt.Errorf(format, args...)}
}
