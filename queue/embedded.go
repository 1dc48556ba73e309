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
func startServer(ctx context.Context, cfg *Config, log *slog.Logger) (*server.Server, error) {
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
	sl := &serverLog{log: log.With("component", "nats-server"), debug: cfg.Debug}
	s.SetLoggerV2(sl, cfg.Debug, false, false)
	s.Start()

	deadline := startTimeout
	if d, ok := ctx.Deadline(); ok && time.Until(d) < deadline {
		deadline = time.Until(d)
	}
	if !s.ReadyForConnections(deadline) || !s.JetStreamEnabled() {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("queue: start embedded server with JetStream in %s: %w", cfg.Dir, sl.failure())
	}
	return s, nil
}

// serverLog hands nats-server's log lines to slog, and remembers the last
// fatal or error line so that a failed start can say why.
type serverLog struct {
	log   *slog.Logger
	debug bool

	mu   sync.Mutex
	last string
}

var _ server.Logger = (*serverLog)(nil)

func (l *serverLog) Noticef(format string, v ...any) {
	if l.debug {
		l.log.Info(fmt.Sprintf(format, v...))
	}
}

func (l *serverLog) Warnf(format string, v ...any) { l.log.Warn(fmt.Sprintf(format, v...)) }

func (l *serverLog) Fatalf(format string, v ...any) { l.remember(slog.LevelError, format, v) }

func (l *serverLog) Errorf(format string, v ...any) { l.remember(slog.LevelError, format, v) }

func (l *serverLog) Debugf(format string, v ...any) {
	if l.debug {
		l.log.Debug(fmt.Sprintf(format, v...))
	}
}

func (l *serverLog) Tracef(format string, v ...any) {}

func (l *serverLog) remember(level slog.Level, format string, v []any) {
	msg := fmt.Sprintf(format, v...)
	l.log.Log(context.Background(), level, msg)
	l.mu.Lock()
	l.last = msg
	l.mu.Unlock()
}

func (l *serverLog) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == "" {
		return errors.New("not ready in time")
	}
	return errors.New(l.last)
}
