package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startTimeout bounds how long the embedded server may take to recover its
// store and accept connections.
const startTimeout = 30 * time.Second

// startServer runs nats-server with JetStream inside the process, storing
// in cfg.Dir, within cfg's memory and disk limits. It never writes to
// stdout: the server's lines go to log, its notices only with cfg.Debug.
// guard, when not nil, is told of every error line and then watches the
// server's store (see storeGuard).
func startServer(ctx context.Context, cfg *Config, log *slog.Logger, guard *storeGuard) (*server.Server, error) {
	host, port, err := splitListen(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("queue: embedded server listen: %w", err)
	}
	opts := &server.Options{
		ServerName:         "viaduct",
		Host:               host,
		Port:               port,
		JetStream:          true,
		StoreDir:           cfg.Dir,
		JetStreamMaxMemory: cfg.MaxMemory,
		JetStreamMaxStore:  cfg.MaxStore,
		NoSigs:             true,
		NoLog:              true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("queue: configure embedded server in %s: %w", cfg.Dir, err)
	}
	sl := &serverLog{log: log.With("component", "nats-server"), debug: cfg.Debug, guard: guard}
	s.SetLoggerV2(sl, cfg.Debug, false, false)
	s.Start()

	deadline := time.Now().Add(startTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// Poll, so that a start that has already failed (a store directory
	// that is a file) is reported at once rather than at the deadline.
	ready := false
	for !ready && !sl.failed() && ctx.Err() == nil && time.Now().Before(deadline) {
		ready = s.ReadyForConnections(50 * time.Millisecond)
	}
	if !ready || !s.JetStreamEnabled() {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("queue: start embedded server with JetStream in %s: %w", cfg.Dir, sl.failure())
	}
	if guard != nil {
		// The same JetStream configuration the server started with.
		guard.start(s, server.JetStreamConfig{
			StoreDir: opts.StoreDir, MaxMemory: opts.JetStreamMaxMemory, MaxStore: opts.JetStreamMaxStore,
			SyncInterval: opts.SyncInterval, SyncAlways: opts.SyncAlways, Strict: !opts.NoJetStreamStrict,
			Domain: opts.JetStreamDomain, CompressOK: true, UniqueTag: opts.JetStreamUniqueTag,
		})
	}
	return s, nil
}

// serverLog hands nats-server's log lines to slog, and remembers the last
// error line so that a failed start can say why, and whether the server
// gave up (a fatal line) so that Open need not wait for it.
type serverLog struct {
	log   *slog.Logger
	debug bool
	guard *storeGuard

	mu    sync.Mutex
	last  string
	fatal bool // the server gave up starting
}

var _ server.Logger = (*serverLog)(nil)

func (l *serverLog) Noticef(format string, v ...any) {
	if l.debug {
		l.log.Info(fmt.Sprintf(format, v...))
	}
}

func (l *serverLog) Warnf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Warn(msg)
	l.guard.noticed(msg)
}

func (l *serverLog) Fatalf(format string, v ...any) { l.remember(true, format, v) }

func (l *serverLog) Errorf(format string, v ...any) { l.remember(false, format, v) }

func (l *serverLog) Debugf(format string, v ...any) {
	if l.debug {
		l.log.Debug(fmt.Sprintf(format, v...))
	}
}

func (l *serverLog) Tracef(format string, v ...any) {}

func (l *serverLog) remember(fatal bool, format string, v []any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Error(msg)
	l.guard.noticed(msg)
	l.mu.Lock()
	l.last = msg
	l.fatal = l.fatal || fatal
	l.mu.Unlock()
}

func (l *serverLog) failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fatal
}

func (l *serverLog) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == "" {
		return errors.New("not ready in time")
	}
	return errors.New(l.last)
}
