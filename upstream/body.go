package upstream

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// response turns a 2xx, 304 or redirect answer into a Response whose Body
// enforces the Request's limits and gives the host slot back on Close.
func (c *Client) response(req *Request, hr *http.Response, attempt int, op string, release func(), cancel context.CancelFunc) (*Response, error) {
	uri := hr.Request.URL.String()
	resp := &Response{
		Status:        hr.StatusCode,
		Header:        hr.Header,
		URI:           uri,
		ETag:          hr.Header.Get("ETag"),
		LastModified:  hr.Header.Get("Last-Modified"),
		ContentLength: hr.ContentLength,
		Attempts:      attempt,
	}
	if lv := hr.Header.Values("Link"); len(lv) > 0 {
		resp.Links = ParseLinkHeader(strings.Join(lv, ", "))
		for i := range resp.Links {
			resp.Links[i].Target = resp.Links[i].Resolve(uri)
		}
	}
	if hr.StatusCode == http.StatusNotModified || isRedirect(hr.StatusCode) {
		drain(hr.Body)
		cancel()
		release()
		resp.NotModified = hr.StatusCode == http.StatusNotModified
		resp.Body = http.NoBody
		resp.ContentLength = 0
		return resp, nil
	}
	refuse := func(kind error, err error) (*Response, error) {
		hr.Body.Close() // not drained: a refused body is not read at all
		cancel()
		release()
		return nil, &Error{Source: req.Source, URI: uri, Op: op, Status: hr.StatusCode, Attempts: attempt, Kind: kind, Err: err}
	}
	gz, err := encoding(hr.Header, req.Gzip)
	if err != nil {
		return refuse(ErrPermanent, err)
	}
	max := req.MaxBytes
	if req.Declared != nil && *req.Declared < max {
		max = *req.Declared
	}
	if gz {
		resp.ContentLength = -1
	} else if hr.ContentLength > max {
		if max < req.MaxBytes {
			return refuse(ErrTooLarge, fmt.Errorf("Content-Length %d exceeds the declared length of %d bytes", hr.ContentLength, max))
		}
		return refuse(ErrTooLarge, fmt.Errorf("Content-Length %d exceeds the limit of %d bytes", hr.ContentLength, max))
	}
	what := "the limit of"
	if max < req.MaxBytes {
		what = "the declared length of"
	}
	resp.Body = &body{
		raw: hr.Body, gzip: gz, max: max, what: what, want: hr.ContentLength,
		source: req.Source, uri: uri,
		bytes: c.core.metrics.bytes.WithLabelValues(hr.Request.URL.Host),
		done:  func() { cancel(); release() },
	}
	return resp, nil
}

// body is a Response body: decoded, capped, checked for truncation. Its
// errors are *Error with Op "read".
type body struct {
	raw    io.ReadCloser
	gzip   bool
	gz     *gzip.Reader
	max    int64  // decoded bytes allowed
	what   string // what max is, for the error: "the limit of", "the declared length of"
	want   int64  // raw Content-Length, -1 if unknown
	rawN   int64
	n      int64
	source string
	uri    string
	bytes  prometheus.Counter
	err    error
	once   sync.Once
	done   func()
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.gzip && b.gz == nil {
		gz, err := gzip.NewReader(countReader{b})
		if err != nil {
			return 0, b.fail(err)
		}
		gz.Multistream(true)
		b.gz = gz
	}
	// One byte past max is enough to know the body is too large: never
	// ask the Source (or the decoder) for more.
	if left := b.max - b.n + 1; int64(len(p)) > left {
		p = p[:left]
	}
	var k int
	var err error
	if b.gz != nil {
		k, err = b.gz.Read(p)
	} else {
		k, err = b.raw.Read(p)
		b.rawN += int64(k)
	}
	b.n += int64(k)
	if b.n > b.max {
		k -= int(b.n - b.max)
		b.n = b.max
		b.bytes.Add(float64(k))
		b.err = &Error{Source: b.source, URI: b.uri, Op: "read", Kind: ErrTooLarge,
			Err: fmt.Errorf("body exceeds %s %d bytes", b.what, b.max)}
		b.close()
		return k, b.err
	}
	b.bytes.Add(float64(k))
	if err == io.EOF {
		if b.want >= 0 && b.rawN < b.want {
			err = io.ErrUnexpectedEOF
		} else {
			b.err = io.EOF
			b.close()
			return k, io.EOF
		}
	}
	if err != nil {
		return k, b.fail(err)
	}
	return k, nil
}

// fail records err, classified, as the body's error.
func (b *body) fail(err error) error {
	kind := ErrTransient
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		kind = ErrTruncated
		err = fmt.Errorf("body ended after %d of %s bytes: %w", b.rawN, lengthText(b.want), err)
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum):
		kind = ErrPermanent
		err = fmt.Errorf("gzip encoding: %w", err)
	}
	b.err = &Error{Source: b.source, URI: b.uri, Op: "read", Kind: kind, Err: err}
	b.close()
	return b.err
}

func lengthText(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

func (b *body) close() {
	b.once.Do(func() {
		b.raw.Close()
		b.done()
	})
}

// Close releases the connection and the host's slot.
func (b *body) Close() error {
	b.close()
	if b.err == nil {
		b.err = errors.New("read after close")
	}
	return nil
}

// countReader counts the raw bytes the gzip reader consumes.
type countReader struct{ b *body }

func (r countReader) Read(p []byte) (int, error) {
	k, err := r.b.raw.Read(p)
	r.b.rawN += int64(k)
	return k, err
}

// encoding reports whether a response's body is gzip-encoded, and refuses
// an encoding that was not asked for: gzip when identity was (bitstreams,
// whose declared length and hashes are of the bytes as served), and any
// encoding but gzip and identity.
func encoding(h http.Header, asked bool) (bool, error) {
	ce := strings.ToLower(strings.TrimSpace(strings.Join(h.Values("Content-Encoding"), ",")))
	switch {
	case ce == "" || ce == "identity":
		return false, nil
	case ce == "gzip" && asked:
		return true, nil
	case ce == "gzip":
		return false, errors.New("Content-Encoding gzip was not asked for (Accept-Encoding: identity); refused, not decoded")
	}
	return false, fmt.Errorf("Content-Encoding %q was not asked for; refused, not decoded", ce)
}
