package republish

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/viaduct-mirror/viaduct/provenance"
)

// provenanceReply is the JSON answer of GET /provenance?uri=…: every
// resource the URI names, with its chain of hops from the origin to here.
type provenanceReply struct {
	URI       string               `json:"uri"`
	Resources []provenanceResource `json:"resources"`
}

type provenanceResource struct {
	Collection string           `json:"collection"`
	URI        string           `json:"uri"`
	Deleted    bool             `json:"deleted,omitempty"`
	Hops       []provenance.Hop `json:"hops"`
}

// serveProvenance answers for an aggregator URI (one resource) or an
// origin or upstream URI (every resource that came from it).
func (s *Server) serveProvenance(w http.ResponseWriter, r *http.Request) {
	const doc = "provenance"
	uri := r.URL.Query().Get("uri")
	if uri == "" {
		s.fail(w, r, doc, fault(badRequest, nil))
		return
	}
	ctx := r.Context()
	var recs []*Record
	var err error
	if rest, ok := strings.CutPrefix(uri, s.cfg.BaseURL+"/"); ok {
		var u *url.URL
		if u, err = url.Parse("/" + rest); err == nil {
			coll, origin, perr := parseResourcePath(u.EscapedPath(), u.RawQuery, u.ForceQuery)
			if perr != nil || s.collection(coll) == nil {
				s.fail(w, r, doc, fault(notFound, nil))
				return
			}
			var rec *Record
			if rec, err = s.cat.Resource(ctx, coll, origin); err == nil {
				recs = append(recs, rec)
			}
		}
	} else {
		recs, err = s.cat.Lookup(ctx, uri)
	}
	switch {
	case errors.Is(err, ErrNotFound), err == nil && len(recs) == 0:
		s.fail(w, r, doc, fault(notFound, nil))
		return
	case err != nil:
		s.fail(w, r, doc, fmt.Errorf("provenance of %s: %w", uri, err))
		return
	}
	out := provenanceReply{URI: uri}
	for _, rec := range recs {
		if s.collection(rec.Collection) == nil {
			continue
		}
		self, err := s.ResourceURI(rec.Collection, provenance.OriginURI(&rec.Upstream))
		if err != nil {
			continue
		}
		n := rec.Length
		hop := provenance.Hop{URI: self, Modified: rec.At, Length: &n, Type: rec.Type}
		hop.Hash = copyHashes(rec)
		out.Resources = append(out.Resources, provenanceResource{
			Collection: rec.Collection, URI: self, Deleted: rec.Deleted(),
			Hops: provenance.Hops(&rec.Upstream, hop),
		})
	}
	if len(out.Resources) == 0 {
		s.fail(w, r, doc, fault(notFound, nil))
		return
	}
	body, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		s.fail(w, r, doc, fmt.Errorf("provenance of %s: %w", uri, err))
		return
	}
	body = append(body, '\n')
	s.send(w, r, reply{doc: doc, contentType: "application/json", etag: etagOf(string(body)),
		write: func(out io.Writer) (int, error) {
			_, err := out.Write(body)
			return len(recs), err
		}})
}
