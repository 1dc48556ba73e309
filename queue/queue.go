package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/propagation"
)

// Queue is viaduct's connection to NATS JetStream: the embedded server it
// started, if any, and the streams every stage publishes to and reads from.
// It is safe for concurrent use.
type Queue struct {
	cfg     Config
	log     *slog.Logger
	prop    propagation.TextMapPropagator
	metrics *metrics

	srv   *server.Server // nil on an external cluster
	guard *storeGuard    // restarts the embedded server's JetStream after a store fault
	nc    *nats.Conn
	js    jetstream.JetStream

	changes, events, dead jetstream.Stream
	consumer              jetstream.Consumer
	advisories            *nats.Subscription

	kvMu sync.Mutex
	kvs  map[string]jetstream.KeyValue // buckets opened, by name

	closed    chan struct{} // closed when the connection is closed
	closeOnce sync.Once
	closeErr  error
}

// Open starts the embedded server (cfg.URL empty) or connects to cfg.URL,
// then creates or updates the streams and the CHANGES consumer. Close
// releases everything Open started.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("queue: register metrics: %w", err)
	}
	if cfg.NodeName == "" {
		cfg.NodeName = defaultNodeName()
	}
	q := &Queue{cfg: cfg, log: logger, prop: cfg.Propagator, metrics: m, closed: make(chan struct{})}
	if q.prop == nil {
		q.prop = defaultPropagator()
	}
	url := cfg.URL
	opts := []nats.Option{
		nats.Name("viaduct"),
		nats.ClosedHandler(func(*nats.Conn) { close(q.closed) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logger.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { logger.Info("nats reconnected", "url", c.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { logger.Warn("nats async error", "err", err) }),
	}
	if cfg.Embedded() {
		q.guard = newStoreGuard(cfg.Dir, logger)
		q.guard.tidy, q.guard.tidyLater = q.tidyChanges, 2*cfg.AckWait
		if q.srv, err = startServer(ctx, &cfg, logger, q.guard); err != nil {
			return nil, err
		}
		url = q.srv.ClientURL()
		opts = append(opts, nats.InProcessServer(q.srv))
	} else {
		auth, err := cfg.Auth.options()
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.MaxReconnects(-1), nats.ReconnectWait(time.Second))
		opts = append(opts, auth...)
	}
	if q.nc, err = nats.Connect(url, opts...); err != nil {
		q.stopServer()
		return nil, fmt.Errorf("queue: connect to %s: %w", url, err)
	}
	if q.js, err = jetstream.New(q.nc); err != nil {
		q.Close()
		return nil, fmt.Errorf("queue: jetstream on %s: %w", url, err)
	}
	if err := q.setUp(ctx); err != nil {
		q.Close()
		return nil, err
	}
	if err := q.watchMaxDeliveries(); err != nil {
		q.Close()
		return nil, err
	}
	m.watch(q)
	q.announce()
	return q, nil
}

// Close drains the connection, so that pending publishes and acks reach
// the server, then shuts down the embedded server. It is safe to call
// more than once.
func (q *Queue) Close() error {
	q.closeOnce.Do(func() {
		if q.nc != nil {
			if err := q.nc.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
				q.closeErr = fmt.Errorf("queue: drain connection: %w", err)
				q.nc.Close()
			}
			select {
			case <-q.closed:
			case <-time.After(time.Minute):
				q.nc.Close()
			}
		}
		q.stopServer()
	})
	return q.closeErr
}

func (q *Queue) stopServer() {
	q.guard.close()
	if q.srv != nil {
		q.srv.Shutdown()
		q.srv.WaitForShutdown()
	}
}

// JetStream gives other stages the JetStream context, for what this
// package does not wrap (a KV bucket for harvester leases).
func (q *Queue) JetStream() jetstream.JetStream { return q.js }

// Conn is the underlying NATS connection.
func (q *Queue) Conn() *nats.Conn { return q.nc }

// ClientURL is the embedded server's address for other processes (another
// node, the nats CLI); empty on an external cluster.
func (q *Queue) ClientURL() string {
	if q.srv == nil {
		return ""
	}
	return q.srv.ClientURL()
}

// Config returns the configuration the queue was opened with.
func (q *Queue) Config() Config { return q.cfg }
