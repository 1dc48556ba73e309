package sim

import (
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"
)

// serveBitstream serves one resource's current version, generated from the
// seed, with its validators; a deleted or unknown resource is 404.
func (s *Source) serveBitstream(w http.ResponseWriter, r *http.Request, idText, base string, f Fault) {
	id, err := strconv.Atoi(idText)
	if err != nil || id < 1 || strconv.Itoa(id) != idText {
		http.NotFound(w, r)
		return
	}
	s.mu.RLock()
	var res resource
	ok := id <= len(s.res)
	if ok {
		res = s.res[id-1]
	}
	s.mu.RUnlock()
	if !ok || res.deleted {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	etag := `"` + hex.EncodeToString(res.sha256[:16]) + `"`
	h.Set("ETag", etag)
	h.Set("Last-Modified", time.Unix(0, res.modified).UTC().Format(http.TimeFormat))
	h.Set("Link", `<`+base+PathCapabilities+`>; rel="resourcesync"`)
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.FormatInt(res.size, 10))
	if r.Method == http.MethodHead {
		return
	}
	body := io.Reader(newContent(versionSeed(s.cfg.Seed, id, res.version), res.size))
	if f.Truncate {
		// Sending fewer bytes than Content-Length makes the server close
		// the connection, which the client sees as an unexpected EOF.
		body = io.LimitReader(body, res.size/2)
	}
	// The buffer fits the body: a baseline of small bitstreams would
	// otherwise allocate 32 KiB a request, most of the sim's garbage.
	buf := make([]byte, min(max(res.size, 1), 32<<10))
	io.CopyBuffer(onlyWriter{w}, body, buf)
}

// onlyWriter hides a ResponseWriter's ReadFrom, so that CopyBuffer uses the
// buffer it is given.
type onlyWriter struct{ io.Writer }
