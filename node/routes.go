package node

import (
	"net/http"
	"strings"

	"github.com/viaduct-mirror/viaduct/public"
	"github.com/viaduct-mirror/viaduct/republish"
)

// routeKind names the kind of a request to the public listener, for its
// latency histogram, from the paths the node mounts (startPublic) and the
// republisher's layout: <collection>/r/... is a bitstream, <collection>/dumps/...
// a Dump package, and the rest of what the republisher serves
// is documents.
func routeKind(r *http.Request) string {
	path := r.URL.EscapedPath()
	switch {
	case path == republish.HubPath || strings.HasPrefix(path, PathCallbacks):
		return public.KindHub
	case path == "/livez" || path == "/readyz" || path == "/healthz":
		return public.KindOther
	case path == "/" || path == "/index.html" || path == "/robots.txt" || path == "/.well-known/resourcesync" || path == "/provenance":
		return public.KindDocument
	}
	_, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	switch {
	case !ok:
		return public.KindOther
	case strings.HasPrefix(rest, "r/"):
		return public.KindBitstream
	case strings.HasPrefix(rest, "dumps/"):
		return public.KindDump
	case strings.HasSuffix(rest, ".xml") || strings.HasPrefix(rest, "resourcelist/") || strings.HasPrefix(rest, "changelist/"):
		return public.KindDocument
	}
	return public.KindOther
}
