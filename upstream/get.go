package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Get fetches req.URI under the Client's Policy, following at most
// Config.MaxRedirects redirects, each hop checked against the Policy, and
// retrying transient failures. A 2xx or 304 answer is a Response; anything
// else is an *Error.
func (c *Client) Get(ctx context.Context, req Request) (*Response, error) {
	if req.MaxBytes <= 0 {
		req.MaxBytes = c.core.cfg.MaxDocumentBytes
	}
	ctx, span := c.core.tracer.Start(ctx, "upstream GET", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("viaduct.source", req.Source), attribute.String("url.full", req.URI)))
	defer span.End()
	resp, err := c.get(ctx, &req)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.Status), attribute.String("viaduct.final_uri", resp.URI))
	return resp, nil
}

func (c *Client) get(ctx context.Context, req *Request) (*Response, error) {
	if c.policy == nil {
		return nil, c.errorf(req, req.URI, "GET", ErrForbidden, "refused by policy: the client has no policy for this Source")
	}
	uri, op, from := req.URI, "GET", ""
	for hop := 0; ; hop++ {
		u, err := url.Parse(uri)
		if err != nil {
			return nil, c.errorf(req, uri, op, ErrPermanent, "%w", err)
		}
		if err := c.policy.allowURL(u); err != nil {
			c.core.metrics.refused.WithLabelValues(u.Host).Inc()
			c.core.log.WarnContext(ctx, "upstream request refused by policy", "source", req.Source, "uri", uri, "from", from, "err", err)
			if from != "" {
				return nil, c.errorf(req, uri, op, ErrForbidden, "redirected from %s: %w", from, err)
			}
			return nil, c.errorf(req, uri, op, ErrForbidden, "%w", err)
		}
		resp, err := c.attempts(ctx, req, u, op)
		if err != nil {
			return nil, err
		}
		if !isRedirect(resp.Status) {
			return resp, nil
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc == "" {
			return nil, &Error{Source: req.Source, URI: uri, Op: op, Status: resp.Status, Kind: ErrPermanent, Err: errors.New("redirect without Location")}
		}
		if hop >= c.core.cfg.MaxRedirects {
			return nil, &Error{Source: req.Source, URI: uri, Op: op, Status: resp.Status, Kind: ErrPermanent,
				Err: fmt.Errorf("more than %d redirects", c.core.cfg.MaxRedirects)}
		}
		next, err := u.Parse(strings.TrimSpace(loc))
		if err != nil {
			return nil, &Error{Source: req.Source, URI: uri, Op: op, Status: resp.Status, Kind: ErrPermanent, Err: err}
		}
		from, uri, op = uri, next.String(), "redirect"
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}
