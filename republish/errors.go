package republish

import (
	"errors"
	"fmt"
	"net/http"
)

// kind is what went wrong with a request, as a Destination sees it. The
// handlers say which kind; statuses alone turns a kind into an HTTP
// status, so that the same failure answers the same everywhere.
type kind uint8

const (
	// internal: the node failed (catalog, blob store, a document it
	// cannot build); an error with no kind is one.
	internal kind = iota
	// notFound: no such document, part, collection or resource.
	notFound
	// gone: the resource is deleted, or the document no longer served
	// (a snapshot dropped, a closed Change List pruned).
	gone
	// badRequest: a query the server cannot read.
	badRequest
	// methodNotAllowed: anything but GET and HEAD.
	methodNotAllowed
	// unavailable: not ready yet; the handler says when to come back
	// (Retry-After).
	unavailable
)

// statuses is the one table of the server's error statuses.
var statuses = [...]int{
	internal:         http.StatusInternalServerError,
	notFound:         http.StatusNotFound,
	gone:             http.StatusGone,
	badRequest:       http.StatusBadRequest,
	methodNotAllowed: http.StatusMethodNotAllowed,
	unavailable:      http.StatusServiceUnavailable,
}

// requestError is a request that failed: its kind, and the cause when the
// node has something to log (nil for an ordinary 404).
type requestError struct {
	kind kind
	err  error
}

// fault is a failed request of kind k, caused by err (nil: nothing to log).
func fault(k kind, err error) error { return &requestError{kind: k, err: err} }

func (e *requestError) Error() string {
	status := statuses[e.kind]
	if e.err == nil {
		return http.StatusText(status)
	}
	return fmt.Sprintf("%s: %v", http.StatusText(status), e.err)
}

func (e *requestError) Unwrap() error { return e.err }

// statusOf is the HTTP status that answers err.
func statusOf(err error) int {
	var re *requestError
	if errors.As(err, &re) {
		return statuses[re.kind]
	}
	return statuses[internal]
}

// causeOf is what to log of err: nil for a failure of the request alone.
func causeOf(err error) error {
	var re *requestError
	if errors.As(err, &re) {
		return re.err
	}
	return err
}

// fail answers a failed request with the status of err's kind, counts it
// under doc and logs its cause, if it has one.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, doc string, err error) {
	status := statusOf(err)
	if cause := causeOf(err); cause != nil {
		s.log.ErrorContext(r.Context(), "republish: request failed", "uri", r.URL.String(), "status", status, "err", cause)
	}
	s.m.requests.WithLabelValues(doc, fmt.Sprint(status)).Inc()
	http.Error(w, http.StatusText(status), status)
}
