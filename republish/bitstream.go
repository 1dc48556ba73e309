package republish

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/viaduct-mirror/viaduct/storage"
)

// serveBitstream serves the aggregator's copy of a resource from the blob
// store. A resource the catalog records as deleted answers 410 Gone, one it
// never held 404. A blob that is missing or whose size disagrees with the
// catalog is an error of the aggregator (500), never served as is.
func (s *Server) serveBitstream(w http.ResponseWriter, r *http.Request, c *Collection) {
	const doc = "bitstream"
	coll, origin, err := parseResourcePath(r.URL.EscapedPath(), r.URL.RawQuery, r.URL.ForceQuery)
	if err != nil || coll != c.Name {
		s.fail(w, r, doc, fault(notFound, nil))
		return
	}
	ctx := r.Context()
	rec, err := s.cat.Resource(ctx, coll, origin)
	switch {
	case errors.Is(err, ErrNotFound):
		s.fail(w, r, doc, fault(notFound, nil))
		return
	case err != nil:
		s.fail(w, r, doc, fmt.Errorf("collection %s: look up %s: %w", coll, origin, err))
		return
	case rec.Deleted():
		s.fail(w, r, doc, fault(gone, nil))
		return
	}
	blob, err := s.blobs.Open(ctx, rec.SHA256)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			err = fmt.Errorf("catalog holds %s but its blob is missing: %w", origin, err)
		}
		s.log.ErrorContext(ctx, "republish: bitstream unavailable", "collection", coll, "uri", origin, "sha256", rec.SHA256, "err", err)
		s.fail(w, r, doc, fault(internal, nil))
		return
	}
	defer blob.Close()
	if info := blob.Info(); info.Size != rec.Length {
		s.log.ErrorContext(ctx, "republish: blob size disagrees with catalog", "collection", coll, "uri", origin, "sha256", rec.SHA256, "blob_size", info.Size, "length", rec.Length)
		s.fail(w, r, doc, fault(internal, nil))
		return
	}
	h := w.Header()
	typ := rec.Type
	if typ == "" {
		typ = "application/octet-stream"
	}
	h.Set("Content-Type", typ)
	h.Set("ETag", `"`+rec.SHA256+`"`)
	h.Add("Link", "<"+s.capabilityListURL(coll)+`>; rel="resourcesync"`)
	cw := &countingResponse{ResponseWriter: w}
	http.ServeContent(cw, r, "", rec.At, blob)
	s.m.requests.WithLabelValues(doc, fmt.Sprint(cw.status())).Inc()
	s.m.bytes.WithLabelValues(doc).Add(float64(cw.n))
}

// countingResponse records the status and body bytes of a response it
// passes through.
type countingResponse struct {
	http.ResponseWriter
	code int
	n    int64
}

func (c *countingResponse) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingResponse) Write(p []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingResponse) status() int {
	if c.code == 0 {
		return http.StatusOK
	}
	return c.code
}
