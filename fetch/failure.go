package fetch

import (
	"context"
	"errors"
	"strconv"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/upstream"
)

// failure is why a change could not be handled this time.
type failure struct {
	// reason is a short fixed word: the metric label and the start of the
	// dead letter's reason.
	reason string
	// retry says another delivery may succeed.
	retry bool
	// retryFor, when non-zero, ends retrying after that many deliveries,
	// before the queue's last one (404s).
	retryFor int
	// interrupted: the worker was stopped; the change goes back at once
	// and the attempt does not count as a verdict.
	interrupted bool
	// busy: every slot of the host stayed taken; nothing was sent. The
	// change is not failed: it waits for its host (see lot).
	busy bool
	// storeFaulted: the store of events had a fault at some moment of the
	// publish (its acknowledgement may have been lost in JetStream's
	// restart, after which the store takes writes again).
	storeFaulted bool
	err          error
	// evidence is what an operator needs to judge the dead letter.
	evidence map[string]string
}

func (f *failure) Error() string { return f.reason + ": " + f.err.Error() }

// evidence starts a dead letter's evidence with what the Source declared.
func evidence(c *viaduct.Change, uri string) map[string]string {
	ev := map[string]string{"uri": uri}
	if uri != c.URI {
		ev["origin"] = c.URI
	}
	if len(c.Hash) > 0 {
		ev["declared_hash"] = c.Hash.String()
	}
	if v := c.Hash.Get(resourcesync.SHA256); v != "" {
		ev["declared_sha256"] = v
	}
	if v := c.Hash.Get(resourcesync.MD5); v != "" {
		ev["declared_md5"] = v
	}
	if c.Length != nil {
		ev["declared_length"] = strconv.FormatInt(*c.Length, 10)
	}
	if c.Doc != "" {
		ev["doc"] = c.Doc
	}
	return ev
}

// classify turns an upstream error on uri into a failure.
func classify(ctx context.Context, c *viaduct.Change, uri string, err error, notFoundAttempts int) *failure {
	if ctx.Err() == nil && errors.Is(err, upstream.ErrBusy) {
		// Nothing was sent, and the change is parked or handed back:
		// nothing reads a busy failure's evidence, which a saturated
		// host would otherwise have built for every attempt.
		return &failure{reason: "busy", retry: true, busy: true, err: err}
	}
	f := &failure{err: err, evidence: evidence(c, uri)}
	f.evidence["error"] = err.Error()
	var ue *upstream.Error
	if errors.As(err, &ue) && ue.Status != 0 {
		f.evidence["status"] = strconv.Itoa(ue.Status)
	}
	switch {
	case ctx.Err() != nil:
		f.reason, f.retry, f.interrupted = "interrupted", true, true
	case errors.Is(err, upstream.ErrForbidden):
		f.reason = "forbidden"
	case errors.Is(err, upstream.ErrNotFound):
		f.reason, f.retry, f.retryFor = "not_found", true, notFoundAttempts
	case errors.Is(err, upstream.ErrTooLarge):
		f.reason = "too_large"
	case errors.Is(err, upstream.ErrTruncated):
		f.reason, f.retry = "truncated", true
	case upstream.IsTransient(err):
		f.reason, f.retry = "transient", true
	default:
		f.reason = "upstream"
	}
	return f
}

// hope ranks failures by how likely a later delivery is to succeed; when
// the origin and every mirror failed, the most hopeful one decides.
func (f *failure) hope() int {
	switch {
	case f.interrupted, f.busy:
		return 0
	case f.retry && f.retryFor == 0 && f.reason != "mismatch":
		return 1
	case f.reason == "mismatch":
		return 2
	case f.retry:
		return 3
	}
	return 4
}
