package republish

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/storage"
)

// Dump documents and packages live below each collection:
//
//	<base>/<collection>/resourcedump.xml     the Resource Dump
//	<base>/<collection>/changedump.xml       the Change Dump
//	<base>/<collection>/dumps/<sha-256>.zip  a package
//	<base>/<collection>/dumps/<sha-256>.xml  its manifest copy (rel="contents")
//
// Packages are named by the sha-256 of their bytes, which is also their
// blob key and their entity tag; only packages the collection's Dumps list
// (or listed until the last rebuild) are served.

const zipType = "application/zip"

func (s *Server) resourceDumpURL(c string) string { return s.url("/" + c + "/resourcedump.xml") }

func (s *Server) changeDumpURL(c string) string { return s.url("/" + c + "/changedump.xml") }

func (s *Server) dumpFileURL(c, key, ext string) string {
	return s.url("/" + c + "/dumps/" + key + ext)
}

// dumpCapabilities are the Capability List entries of a collection's
// Dumps, when they are enabled.
func (s *Server) dumpCapabilities(c *Collection) []resourcesync.Entry {
	if !s.cfg.Dumps.Enabled {
		return nil
	}
	return []resourcesync.Entry{
		{Loc: s.resourceDumpURL(c.Name), MD: &resourcesync.MD{Capability: resourcesync.CapResourceDump}},
		{Loc: s.changeDumpURL(c.Name), MD: &resourcesync.MD{Capability: resourcesync.CapChangeDump}},
	}
}

// Handler serves the Dump documents, packages and manifest copies of every
// collection; other paths are 404.
func (d *Dumps) Handler() http.Handler { return http.HandlerFunc(d.route) }

func (d *Dumps) route(w http.ResponseWriter, r *http.Request) {
	s := d.s
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.fail(w, r, "dump", fault(methodNotAllowed, nil))
		return
	}
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	col := s.collection(name)
	if col == nil {
		s.fail(w, r, "dump", fault(notFound, nil))
		return
	}
	ds := d.current(col.Name)
	switch {
	case rest == "resourcedump.xml":
		d.serveResourceDump(w, r, col, ds)
	case rest == "changedump.xml":
		d.serveChangeDump(w, r, col, ds)
	case strings.HasPrefix(rest, "dumps/"):
		d.serveDumpFile(w, r, ds, strings.TrimPrefix(rest, "dumps/"))
	default:
		s.fail(w, r, "dump", fault(notFound, nil))
	}
}

// packageEntry is a package's entry in a Resource Dump or Change Dump.
func (s *Server) packageEntry(coll string, p *dumpPackage) resourcesync.Entry {
	n := p.Length
	md := &resourcesync.MD{Type: zipType, Length: &n, At: p.At, Completed: p.Completed, From: p.From, Until: p.Until,
		Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: p.MD5}, {Alg: resourcesync.SHA256, Value: p.Key}}}
	return resourcesync.Entry{Loc: s.dumpFileURL(coll, p.Key, ".zip"), MD: md,
		Links: []resourcesync.Link{{Rel: "contents", Href: s.dumpFileURL(coll, p.Manifest, ".xml"), Type: "application/xml"}}}
}

func (d *Dumps) serveResourceDump(w http.ResponseWriter, r *http.Request, c *Collection, ds *dumpState) {
	s := d.s
	rd := ds.Resource
	if rd == nil {
		// Built when the node starts: only a fresh node has none yet.
		w.Header().Set("Retry-After", "60")
		s.fail(w, r, "resourcedump", fault(unavailable, nil))
		return
	}
	h := &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapResourceDump, At: rd.At, Completed: rd.Completed},
		Links: []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(c.Name)}},
	}
	keys := make([]string, len(rd.Packages))
	for i, p := range rd.Packages {
		keys[i] = p.Key
	}
	etag := etagOf("resourcedump", c.Name, rd.At.UnixNano(), rd.Completed.UnixNano(), strings.Join(keys, ","), s.confID())
	d.sendPackages(w, r, "resourcedump", etag, h, c.Name, rd.Packages)
}

func (d *Dumps) serveChangeDump(w http.ResponseWriter, r *http.Request, c *Collection, ds *dumpState) {
	s := d.s
	from := ds.Next
	if len(ds.Changes) > 0 {
		from = ds.Changes[0].From
	}
	if from.IsZero() {
		// Nothing packaged yet: the dump starts with the open period.
		st, err := s.cat.Stats(r.Context(), c.Name)
		if err != nil {
			s.fail(w, r, "changedump", fmt.Errorf("collection %s: stats: %w", c.Name, err))
			return
		}
		from = s.periodStart(s.headTime(st))
	}
	h := &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeDump, From: from},
		Links: []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(c.Name)}},
	}
	last := ""
	if n := len(ds.Changes); n > 0 {
		last = ds.Changes[n-1].Key
	}
	etag := etagOf("changedump", c.Name, from.UnixNano(), len(ds.Changes), last, s.confID())
	d.sendPackages(w, r, "changedump", etag, h, c.Name, ds.Changes)
}

// sendPackages writes a Dump document listing pkgs.
func (d *Dumps) sendPackages(w http.ResponseWriter, r *http.Request, doc, etag string, h *resourcesync.Header, coll string, pkgs []dumpPackage) {
	s := d.s
	s.send(w, r, reply{doc: doc, contentType: xmlType, etag: etag,
		write: func(out io.Writer) (int, error) {
			wr, err := resourcesync.NewWriter(out, h)
			if err != nil {
				return 0, err
			}
			for i := range pkgs {
				e := s.packageEntry(coll, &pkgs[i])
				if err := wr.Write(&e); err != nil {
					return i, err
				}
			}
			return len(pkgs), wr.Close()
		}})
}

// serveDumpFile serves a package or a manifest copy from the blob store,
// with ranges and conditional requests (http.ServeContent).
func (d *Dumps) serveDumpFile(w http.ResponseWriter, r *http.Request, ds *dumpState, name string) {
	s := d.s
	key, ext, _ := strings.Cut(name, ".")
	p, manifest := ds.find(key)
	if p == nil || storage.CheckKey(key) != nil || (ext != "zip" || manifest) && (ext != "xml" || !manifest) {
		s.fail(w, r, "dump-file", fault(notFound, nil))
		return
	}
	b, err := d.blobs.Open(r.Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		s.fail(w, r, "dump-file", fault(notFound, fmt.Errorf("dump file %s is described but not stored: %w", key, err)))
		return
	}
	if err != nil {
		s.fail(w, r, "dump-file", fmt.Errorf("dump file %s: %w", key, err))
		return
	}
	defer b.Close()
	h := w.Header()
	h.Set("Content-Type", zipType)
	if manifest {
		h.Set("Content-Type", xmlType)
	}
	h.Set("ETag", `"`+key+`"`)
	h.Set("Cache-Control", "public, max-age=86400")
	s.m.requests.WithLabelValues("dump-file", "200").Inc()
	http.ServeContent(w, r, "", b.Info().ModTime, b)
}
