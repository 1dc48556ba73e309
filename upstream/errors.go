package upstream

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Kinds of failure callers branch on with errors.Is. Every error the Client
// returns for a request is an *Error whose Kind is one of these.
var (
	// ErrForbidden: the Policy refused the URI (scheme, authority, address)
	// on the first request or on a redirect hop. Permanent.
	ErrForbidden = errors.New("forbidden by policy")
	// ErrNotFound: the host answered 404 or 410. Permanent.
	ErrNotFound = errors.New("not found")
	// ErrTooLarge: the body is larger than the Request allowed. Permanent.
	ErrTooLarge = errors.New("body too large")
	// ErrTruncated: the body ended before its Content-Length or before its
	// encoding's end. Transient.
	ErrTruncated = errors.New("body truncated")
	// ErrTransient: a network failure, a timeout, 408, 425, 429 or 500,
	// 502, 503, 504, still failing after every attempt. Worth trying later.
	ErrTransient = errors.New("transient failure")
	// ErrBusy: every slot of the host stayed taken for the Request's
	// HostWait; nothing was sent. Worth trying at once on another turn.
	ErrBusy = errors.New("host busy")
	// ErrPermanent: any other failure (4xx, a redirect without Location,
	// too many redirects, a malformed response). Trying again will not help.
	ErrPermanent = errors.New("permanent failure")
)

// Error is a failed request to an upstream host: which Source, which URI,
// what was being done, the HTTP status if one was received, and what kind of
// failure it is.
type Error struct {
	Source string
	URI    string
	// Op is what was being done: "GET", "redirect" or "read".
	Op string
	// Status is the last HTTP status received, 0 if none.
	Status int
	// Attempts is how many attempts were made.
	Attempts int
	// Kind is one of ErrForbidden, ErrNotFound, ErrTooLarge, ErrTruncated,
	// ErrTransient, ErrBusy, ErrPermanent.
	Kind error
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "source %q: %s %s: ", e.Source, e.Op, e.URI)
	// The status is the failure itself for the status-derived kinds; for
	// the others (a body too large, say) the cause says more.
	fromStatus := e.Kind == ErrNotFound || e.Kind == ErrTransient || e.Kind == ErrPermanent
	switch {
	case e.Status != 0 && fromStatus && e.Err != nil:
		fmt.Fprintf(&b, "%d %s: %v", e.Status, http.StatusText(e.Status), e.Err)
	case e.Status != 0 && (fromStatus || e.Err == nil):
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString(e.Kind.Error())
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	return b.String()
}

// Unwrap gives the cause, so that errors.Is finds context.Canceled and
// the like.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// IsTransient reports whether err is a failure worth retrying later: a
// network failure, a server overloaded or failing, a truncated body.
func IsTransient(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, ErrTruncated)
}

// statusKind decides, in one place, what an HTTP status means: nil for a
// response to deliver, else the Kind of the failure and whether another
// attempt may succeed.
func statusKind(code int) (kind error, retry bool) {
	switch {
	case code >= 200 && code < 300, code == http.StatusNotModified:
		return nil, false
	case code == http.StatusNotFound, code == http.StatusGone:
		return ErrNotFound, false
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly,
		code == http.StatusTooManyRequests, code == http.StatusInternalServerError,
		code == http.StatusBadGateway, code == http.StatusServiceUnavailable,
		code == http.StatusGatewayTimeout:
		return ErrTransient, true
	}
	return ErrPermanent, false
}
