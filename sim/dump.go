package sim

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
	"github.com/viaduct-mirror/viaduct/resourcesync/dump"
)

// Paths of the Dumps a Source with Config.Dumps offers. Package n of the
// Resource Dump holds the live resources of Resource List part n; package
// k of the Change Dump holds the changes of Change List k, deletions
// included.
const (
	PathResourceDump = "/resourcedump.xml"
	PathChangeDump   = "/changedump.xml"
)

// ContentTypeZip is the media type of a Dump package.
const ContentTypeZip = "application/zip"

func resourceDumpPackage(n int) string { return "/resourcedump-" + strconv.Itoa(n) + ".zip" }
func changeDumpPackage(k int) string   { return "/changedump-" + strconv.Itoa(k) + ".zip" }

// dumpState holds the packages tests put in place of the ones the Source
// would build.
type dumpState struct {
	mu       sync.Mutex
	override map[string][]byte
}

// OverridePackage makes the Source serve body at path (such as
// "/resourcedump-1.zip") instead of the package it would build: a test's
// way of serving a crafted, hostile ZIP. A nil body restores the built
// package.
func (s *Source) OverridePackage(path string, body []byte) {
	s.dumps.mu.Lock()
	defer s.dumps.mu.Unlock()
	if body == nil {
		delete(s.dumps.override, path)
		return
	}
	if s.dumps.override == nil {
		s.dumps.override = map[string][]byte{}
	}
	s.dumps.override[path] = body
}

// dumpCapabilities are the Capability List entries of the Dumps, when the
// Source offers them.
func (s *Source) dumpCapabilities(base string) []resourcesync.Entry {
	if !s.cfg.Dumps {
		return nil
	}
	out := []resourcesync.Entry{{Loc: base + PathResourceDump, MD: &resourcesync.MD{Capability: resourcesync.CapResourceDump}}}
	if !s.cfg.NoChangeLists {
		out = append(out, resourcesync.Entry{Loc: base + PathChangeDump, MD: &resourcesync.MD{Capability: resourcesync.CapChangeDump}})
	}
	return out
}

// dumpDocument finds a Dump document at path p.
func (s *Source) dumpDocument(p string) (document, bool) {
	switch {
	case !s.cfg.Dumps:
		return document{}, false
	case p == PathResourceDump:
		return document{writeResourceDump}, true
	case p == PathChangeDump && !s.cfg.NoChangeLists:
		return document{writeChangeDump}, true
	}
	return document{}, false
}

// writeResourceDump lists one package per Resource List part. Packages
// are built when asked for, so their length is not stated (the spec only
// recommends it).
func writeResourceDump(w io.Writer, s *Source, base string, _ Fault) error {
	at := s.cfg.Now().UTC()
	n := s.parts()
	entries := make([]resourcesync.Entry, n)
	for i := range entries {
		entries[i] = resourcesync.Entry{Loc: base + resourceDumpPackage(i+1), MD: &resourcesync.MD{Type: ContentTypeZip, At: at}}
	}
	return writeEntries(w, &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapResourceDump, At: at},
		Links: up(base + PathCapabilities),
	}, entries...)
}

// writeChangeDump lists one package per Change List period; the open
// period's package has no until.
func writeChangeDump(w io.Writer, s *Source, base string, _ Fault) error {
	cur := s.currentPeriod()
	entries := make([]resourcesync.Entry, 0, cur+1)
	for k := 0; k <= cur; k++ {
		md := &resourcesync.MD{Type: ContentTypeZip, From: s.periodStart(k)}
		if k < cur {
			md.Until = s.periodStart(k + 1)
		}
		entries = append(entries, resourcesync.Entry{Loc: base + changeDumpPackage(k), MD: md})
	}
	return writeEntries(w, &resourcesync.Header{
		MD:    resourcesync.MD{Capability: resourcesync.CapChangeDump, From: s.epoch},
		Links: up(base + PathCapabilities),
	}, entries...)
}

// servePackage answers a request for a Dump package, built on the fly and
// streamed (no Content-Length), or the override a test set.
func (s *Source) servePackage(w http.ResponseWriter, r *http.Request, p, base string) {
	s.dumps.mu.Lock()
	body, ok := s.dumps.override[p]
	s.dumps.mu.Unlock()
	var build func(context.Context, io.Writer, *Source, string) error
	if n, isRD := numberedSuffix(p, "/resourcedump-", ".zip"); isRD && n >= 1 && n <= s.parts() {
		build = func(ctx context.Context, w io.Writer, s *Source, base string) error {
			return writeResourceDumpPackage(ctx, w, s, base, n)
		}
	} else if k, isCD := numberedSuffix(p, "/changedump-", ".zip"); isCD && !s.cfg.NoChangeLists && k <= s.currentPeriod() {
		build = func(ctx context.Context, w io.Writer, s *Source, base string) error {
			return writeChangeDumpPackage(ctx, w, s, base, k)
		}
	}
	if !ok && (build == nil || !s.cfg.Dumps) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ContentTypeZip)
	if ok {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	if r.Method == http.MethodHead {
		return
	}
	if ok {
		w.Write(body)
		return
	}
	// An error here is the client going away; the status is sent.
	_ = build(r.Context(), onlyWriter{w}, s, base)
}

// numberedSuffix reads N from prefix + N + suffix.
func numberedSuffix(p, prefix, suffix string) (int, bool) {
	if !strings.HasSuffix(p, suffix) {
		return 0, false
	}
	return numbered(strings.TrimSuffix(p, suffix)+".xml", prefix)
}

// writeResourceDumpPackage writes package n: the live resources of
// Resource List part n, with their true hashes and lengths.
func writeResourceDumpPackage(ctx context.Context, w io.Writer, s *Source, base string, n int) error {
	at := s.cfg.Now().UTC()
	dw, err := dump.NewWriter(w, &resourcesync.Header{MD: resourcesync.MD{Capability: resourcesync.CapResourceDumpManifest, At: at}}, dump.Config{})
	if err != nil {
		return err
	}
	lo, hi := (n-1)*s.cfg.PartSize, n*s.cfg.PartSize
	buf := make([]resource, 0, chunk)
	for i := lo; i < hi; i += chunk {
		buf = s.copyRange(buf[:0], i, min(i+chunk, hi))
		if len(buf) == 0 {
			break
		}
		for j := range buf {
			r := &buf[j]
			if r.deleted {
				continue
			}
			id := i + j + 1
			e := &resourcesync.Entry{Loc: base + resPath(id), LastMod: time.Unix(0, r.modified).UTC(), MD: trueMD(r.size, r.md5[:], r.sha256[:])}
			if err := dw.Add(ctx, e, newContent(versionSeed(s.cfg.Seed, id, r.version), r.size)); err != nil {
				dw.Close()
				return fmt.Errorf("simulated Source: resource dump package %d: %w", n, err)
			}
		}
	}
	if err := dw.Close(); err != nil {
		return fmt.Errorf("simulated Source: resource dump package %d: %w", n, err)
	}
	return nil
}

// writeChangeDumpPackage writes package k: the changes of period k in
// order, each created or updated one with the bitstream of the version it
// produced.
func writeChangeDumpPackage(ctx context.Context, w io.Writer, s *Source, base string, k int) error {
	from, until := s.periodStart(k), s.periodStart(k+1)
	md := resourcesync.MD{Capability: resourcesync.CapChangeDumpManifest, From: from}
	if k < s.currentPeriod() {
		md.Until = until
	}
	dw, err := dump.NewWriter(w, &resourcesync.Header{MD: md}, dump.Config{})
	if err != nil {
		return err
	}
	changes := s.changesIn(from.UnixNano(), until.UnixNano())
	for i := range changes {
		c := &changes[i]
		t := time.Unix(0, c.time).UTC()
		var body io.Reader
		e := resourcesync.Entry{Loc: base + resPath(int(c.id)), MD: &resourcesync.MD{Change: c.op.String()}}
		mod := t
		if c.op == opDelete {
			mod = time.Time{}
		} else {
			e.MD = trueMD(c.size, c.md5[:], c.sha256[:])
			e.MD.Change = c.op.String()
			body = newContent(versionSeed(s.cfg.Seed, int(c.id), c.version), c.size)
		}
		e = s.timed(e, t, mod)
		if err := dw.Add(ctx, &e, body); err != nil {
			dw.Close()
			return fmt.Errorf("simulated Source: change dump package %d: %w", k, err)
		}
	}
	if err := dw.Close(); err != nil {
		return fmt.Errorf("simulated Source: change dump package %d: %w", k, err)
	}
	return nil
}

// trueMD states a version's real length and digests, whatever faults
// are set: a package is verified against its manifest when written.
func trueMD(size int64, m, sh []byte) *resourcesync.MD {
	length := size
	return &resourcesync.MD{Type: ContentType, Length: &length, Hash: resourcesync.Hashes{
		{Alg: resourcesync.MD5, Value: hex.EncodeToString(m)},
		{Alg: resourcesync.SHA256, Value: hex.EncodeToString(sh)},
	}}
}
