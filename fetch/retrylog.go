package fetch

import (
	"log/slog"
	"sync"
	"time"
)

// retryLogWindow is how long after a logged retry warning the same
// Source's further failures for the same reason are only counted.
const retryLogWindow = time.Minute

// retryLog summarises the warnings of changes handed back for a retry: a
// Source in trouble fails every change it has queued, hundreds of
// warnings saying the same thing. The first failure per (Source, reason)
// is logged in full; those within retryLogWindow after it are counted,
// and the next warning after the window says how many were not logged.
// The metric counts every one.
type retryLog struct {
	mu   sync.Mutex
	now  func() time.Time
	seen map[retryKey]*retryWindow
}

type retryKey struct{ source, reason string }

type retryWindow struct {
	start      time.Time
	suppressed int
}

func newRetryLog() *retryLog {
	return &retryLog{now: time.Now, seen: map[retryKey]*retryWindow{}}
}

// warn logs one retry warning or counts it; args follow the message.
func (r *retryLog) warn(log *slog.Logger, source, reason, msg string, args ...any) {
	r.mu.Lock()
	now := r.now()
	k := retryKey{source, reason}
	w := r.seen[k]
	if w != nil && now.Sub(w.start) < retryLogWindow {
		w.suppressed++
		r.mu.Unlock()
		return
	}
	suppressed := 0
	if w != nil {
		suppressed = w.suppressed
	}
	if len(r.seen) > 4096 {
		clear(r.seen)
	}
	r.seen[k] = &retryWindow{start: now}
	r.mu.Unlock()
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	log.Warn(msg, args...)
}
