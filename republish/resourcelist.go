package republish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// errStop ends a catalog walk early; it is never returned to a client.
var errStop = errors.New("stop")

// serveResourceList serves the collection's Resource List, or its Resource
// List Index when the collection needs more than one part.
func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, c *Collection) {
	ctx := r.Context()
	st, err := s.cat.Stats(ctx, c.Name)
	if err != nil {
		s.fail(w, r, "resourcelist", fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	rev, err := s.revision(ctx)
	if err != nil {
		s.fail(w, r, "resourcelist", fmt.Errorf("collection %s: catalog state: %w", c.Name, err))
		return
	}
	etag := etagOf("resourcelist", c.Name, st.Changes, st.Last.UnixNano(), rev, s.confID())
	if fresh(r, etag, st.Last) {
		s.send(w, r, reply{doc: "resourcelist", contentType: xmlType, etag: etag, modified: st.Last})
		return
	}
	at := s.headTime(st)
	parts, seq, err := s.plan(ctx, c.Name, rev)
	if err != nil {
		s.fail(w, r, "resourcelist", fmt.Errorf("collection %s: plan resource list: %w", c.Name, err))
		return
	}
	if len(parts) == 1 {
		s.sendResourceList(w, r, c, "resourcelist", etag, st, part{})
		return
	}
	// The parts list the catalog at seq, the plan's: at is the
	// collection's last change then, completed its last change once the
	// plan, which fixes every part, is made.
	if t, ok, err := s.snapshotTime(ctx, c.Name, seq); err != nil {
		s.fail(w, r, "resourcelist-index", fmt.Errorf("collection %s: snapshot at %d: %w", c.Name, seq, err))
		return
	} else if !ok {
		seq = 0
	} else if !t.IsZero() {
		at = t
	}
	st2, err := s.cat.Stats(ctx, c.Name)
	if err != nil {
		s.fail(w, r, "resourcelist-index", fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	completed := s.headTime(st2)
	h := &resourcesync.Header{
		Root:  resourcesync.SitemapIndex,
		MD:    resourcesync.MD{Capability: resourcesync.CapResourceList, At: at, Completed: completed},
		Links: []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(c.Name)}},
	}
	s.send(w, r, reply{doc: "resourcelist-index", contentType: xmlType, etag: etag, modified: st.Last,
		write: func(out io.Writer) (int, error) {
			wr, err := resourcesync.NewWriter(out, h)
			if err != nil {
				return 0, err
			}
			for i, p := range parts {
				e := resourcesync.Entry{Loc: s.partURL(c.Name, i+1, p, seq), MD: &resourcesync.MD{At: at, Completed: completed}}
				if err := wr.Write(&e); err != nil {
					return i, err
				}
			}
			return len(parts), wr.Close()
		}})
}

// revisioned is a catalog that names its state by the sequence of the
// last event it applied.
type revisioned interface {
	LastApplied(ctx context.Context) (uint64, error)
}

// revision is the catalog state, part of a Resource List's entity tag. A
// collection's change count and last change time move only with its
// change log, but an event that leaves the log alone (a Source restating
// a resource's metadata: its times, hashes or links) still changes that
// resource's entry, its via link above all, and a strong tag must change
// with the bytes. Any event moves the revision, so a busy catalog answers
// a conditional request for an unchanged list of another collection with
// the whole list: correct, at some cost. 0 for a catalog that cannot
// tell.
func (s *Server) revision(ctx context.Context) (uint64, error) {
	rc, ok := s.cat.(revisioned)
	if !ok {
		return 0, nil
	}
	return rc.LastApplied(ctx)
}

// partURL is the URI of part n (from 1), which carries its URI range and
// the sequence of the index's snapshot (none when seq is 0).
func (s *Server) partURL(coll string, n int, p part, seq uint64) string {
	q := url.Values{}
	if seq > 0 {
		q.Set("seq", strconv.FormatUint(seq, 10))
	}
	if p.after != "" {
		q.Set("after", p.after)
	}
	if p.last != "" {
		q.Set("last", p.last)
	}
	u := s.url("/" + coll + "/resourcelist/" + strconv.Itoa(n) + ".xml")
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// serveResourceListPart serves one part of a Resource List Index.
func (s *Server) serveResourceListPart(w http.ResponseWriter, r *http.Request, c *Collection) {
	name := strings.TrimPrefix(r.URL.Path, "/"+c.Name+"/resourcelist/")
	if n, err := strconv.Atoi(strings.TrimSuffix(name, ".xml")); err != nil || n < 1 || !strings.HasSuffix(name, ".xml") {
		s.fail(w, r, "resourcelist-part", fault(notFound, nil))
		return
	}
	q := r.URL.Query()
	p := part{after: q.Get("after"), last: q.Get("last")}
	seq, ok := parseSeq(q.Get("seq"))
	if !ok || p.last != "" && p.last <= p.after {
		s.fail(w, r, "resourcelist-part", fault(notFound, nil))
		return
	}
	st, err := s.cat.Stats(r.Context(), c.Name)
	if err != nil {
		s.fail(w, r, "resourcelist-part", fmt.Errorf("collection %s: stats: %w", c.Name, err))
		return
	}
	rev, err := s.revision(r.Context())
	if err != nil {
		s.fail(w, r, "resourcelist-part", fmt.Errorf("collection %s: catalog state: %w", c.Name, err))
		return
	}
	etag := etagOf("resourcelist-part", c.Name, p.after, p.last, seq, st.Changes, st.Last.UnixNano(), rev, s.confID())
	at, snap, err := s.snapshotTime(r.Context(), c.Name, seq)
	if err != nil {
		s.failSnapshot(w, r, fmt.Errorf("collection %s: part %s: %w", c.Name, r.URL.RequestURI(), err))
		return
	}
	if !snap {
		s.sendResourceList(w, r, c, "resourcelist-part", etag, st, p)
		return
	}
	if at.IsZero() {
		at = s.headTime(Stats{})
	}
	sl := s.cat.(snapshotLister)
	s.streamList(w, r, c, "resourcelist-part", etag, st.Last, p,
		func(context.Context) (time.Time, time.Time, error) { return at, at, nil },
		func(ctx context.Context, fn func(*Record) error) error {
			return sl.ResourcesAt(ctx, c.Name, p.after, p.last, seq, fn)
		})
}

// sendResourceList streams a Resource List (p is the zero part) or a part
// of one in one catalog read, as the catalog is now. Its header is written
// when the first record arrives, once the read's snapshot is established:
// at is the collection's last change time before the read, completed the
// one read then, so every entry's state lies between the two.
func (s *Server) sendResourceList(w http.ResponseWriter, r *http.Request, c *Collection, doc, etag string, st Stats, p part) {
	at := s.headTime(st)
	s.streamList(w, r, c, doc, etag, st.Last, p,
		func(ctx context.Context) (time.Time, time.Time, error) {
			st2, err := s.cat.Stats(ctx, c.Name)
			if err != nil {
				return at, at, fmt.Errorf("collection %s: stats: %w", c.Name, err)
			}
			return at, s.headTime(st2), nil
		},
		func(ctx context.Context, fn func(*Record) error) error {
			return s.cat.Resources(ctx, c.Name, p.after, 0, fn)
		})
}

// streamList streams a Resource List or one of its parts from scan, which
// calls fn in URI order from p.after on. times gives the header's at and
// completed, once the first record has arrived (or none will).
func (s *Server) streamList(w http.ResponseWriter, r *http.Request, c *Collection, doc, etag string, modified time.Time, p part,
	times func(context.Context) (at, completed time.Time, err error), scan func(context.Context, func(*Record) error) error) {
	links := []resourcesync.Link{{Rel: "up", Href: s.capabilityListURL(c.Name)}}
	if doc == "resourcelist-part" {
		links = append(links, resourcesync.Link{Rel: "index", Href: s.resourceListURL(c.Name)})
	}
	s.send(w, r, reply{doc: doc, contentType: xmlType, etag: etag, modified: modified,
		write: func(out io.Writer) (int, error) {
			ctx := r.Context()
			b := s.newEntryBuilder(c.Name)
			b.bareLoc = true
			var wr *resourcesync.Writer
			start := func() error {
				at, completed, err := times(ctx)
				if err != nil {
					return err
				}
				h := &resourcesync.Header{Links: links, MD: resourcesync.MD{Capability: resourcesync.CapResourceList, At: at, Completed: completed}}
				wr, err = resourcesync.NewWriter(out, h)
				return err
			}
			n := 0
			err := scan(ctx, func(rec *Record) error {
				if !inRange(rec.URI, p.last) {
					return errStop
				}
				if wr == nil {
					if err := start(); err != nil {
						return err
					}
				}
				if _, err := b.resource(ctx, rec); err != nil {
					return err
				}
				n++
				return b.write(wr)
			})
			if err != nil && !errors.Is(err, errStop) {
				return n, fmt.Errorf("collection %s: resource list: %w", c.Name, err)
			}
			if wr == nil {
				if err := start(); err != nil {
					return 0, err
				}
			}
			return n, wr.Close()
		}})
}

// headTime is the time up to which the catalog holds every change of the
// collection: its last change. A collection with none yet has no such
// change, and the clock would claim too much: changes already on EVENTS
// and not yet applied carry earlier times, and a Destination starting
// from a later at would never ask for them. Its at is the floor of the
// changes to come (Stats.Floor), or the epoch when the catalog has
// applied nothing at all.
func (s *Server) headTime(st Stats) time.Time {
	switch {
	case !st.Last.IsZero():
		return st.Last
	case !st.Floor.IsZero():
		return st.Floor
	}
	return time.Unix(0, 0).UTC()
}
