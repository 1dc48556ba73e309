package upstream

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// attempts GETs one URI (one redirect hop), retrying transient failures.
// A redirect is returned as a Response for the caller to follow.
func (c *Client) attempts(ctx context.Context, req *Request, u *url.URL, op string) (*Response, error) {
	cfg := &c.core.cfg
	uri := u.String()
	a, _ := authorityOf(u) // the Policy accepted u, so it has an authority
	fail := func(attempt, status int, kind, err error) *Error {
		return &Error{Source: req.Source, URI: uri, Op: op, Status: status, Attempts: attempt, Kind: kind, Err: err}
	}
	for attempt := 1; ; attempt++ {
		release, err := c.core.hosts.acquire(ctx, a, req.HostWait)
		if errors.Is(err, errBusy) {
			return nil, fail(attempt-1, 0, ErrBusy, err)
		}
		if err != nil {
			return nil, fail(attempt-1, 0, ErrTransient, err)
		}
		resp, cancel, err := c.roundTrip(ctx, req, u)
		var status int
		var retryAfter time.Duration
		if err != nil {
			cancel()
			release()
			c.core.metrics.requests.WithLabelValues(u.Host, "error").Inc()
			var pe *policyError
			if errors.As(err, &pe) {
				c.core.metrics.refused.WithLabelValues(u.Host).Inc()
				c.core.log.WarnContext(ctx, "upstream address refused by policy", "source", req.Source, "uri", uri, "err", pe)
				return nil, fail(attempt, 0, ErrForbidden, pe)
			}
			if ctx.Err() != nil {
				return nil, fail(attempt, 0, ErrTransient, err)
			}
		} else {
			c.core.metrics.requests.WithLabelValues(u.Host, strconv.Itoa(resp.StatusCode)).Inc()
			kind, retry := statusKind(resp.StatusCode)
			if kind == nil || isRedirect(resp.StatusCode) {
				return c.response(req, resp, attempt, op, release, cancel)
			}
			status = resp.StatusCode
			retryAfter = c.retryAfter(resp.Header.Get("Retry-After"))
			drain(resp.Body)
			cancel()
			release()
			if !retry {
				return nil, fail(attempt, status, kind, nil)
			}
		}
		if attempt >= cfg.MaxAttempts {
			return nil, fail(attempt, status, ErrTransient, err)
		}
		wait := retryAfter
		if wait <= 0 {
			wait = c.backoff(attempt)
		}
		c.core.metrics.retries.WithLabelValues(u.Host).Inc()
		c.core.log.DebugContext(ctx, "upstream attempt failed, retrying", "source", req.Source, "uri", uri,
			"attempt", attempt, "status", status, "err", err, "wait", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fail(attempt, status, ErrTransient, err)
		}
	}
}

// roundTrip sends one attempt. The returned cancel ends the attempt's
// context and must be called once its body is done with.
func (c *Client) roundTrip(ctx context.Context, req *Request, u *url.URL) (*http.Response, context.CancelFunc, error) {
	actx, cancel := context.WithTimeout(ctx, c.core.cfg.RequestTimeout)
	hr, err := http.NewRequestWithContext(actx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, cancel, err
	}
	hr.Header.Set("User-Agent", c.core.cfg.UserAgent)
	if req.Gzip {
		hr.Header.Set("Accept-Encoding", "gzip")
	} else {
		hr.Header.Set("Accept-Encoding", "identity")
	}
	if req.Accept != "" {
		hr.Header.Set("Accept", req.Accept)
	}
	if req.ETag != "" {
		hr.Header.Set("If-None-Match", req.ETag)
	}
	if req.LastModified != "" {
		hr.Header.Set("If-Modified-Since", req.LastModified)
	}
	resp, err := c.core.transport(c.policy.rule).RoundTrip(hr)
	if err == nil {
		stalled := func() { c.core.metrics.stalled.WithLabelValues(u.Host).Inc() }
		resp.Body = watchBody(resp.Body, &c.core.cfg, cancel, stalled)
	}
	return resp, cancel, err
}

// backoff is the wait before attempt+1: full jitter over an exponentially
// growing ceiling, never above BackoffMax.
func (c *Client) backoff(attempt int) time.Duration {
	cfg := &c.core.cfg
	ceil := cfg.BackoffMax
	if attempt-1 < 32 {
		if d := cfg.BackoffBase << (attempt - 1); d > 0 && d < ceil {
			ceil = d
		}
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// retryAfter reads a Retry-After value (seconds or an HTTP date), capped at
// RetryAfterMax; 0 when absent or unreadable.
func (c *Client) retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		d = time.Duration(min(n, int64(c.core.cfg.RetryAfterMax/time.Second)+1)) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		now := time.Now
		if c.core.cfg.Now != nil {
			now = c.core.cfg.Now
		}
		d = t.Sub(now())
	}
	return max(0, min(d, c.core.cfg.RetryAfterMax))
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.core.cfg.Sleep != nil {
		return c.core.cfg.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain reads a little of an unwanted body so its connection can be reused.
func drain(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 4<<10)
	body.Close()
}
