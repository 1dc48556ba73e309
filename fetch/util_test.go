package fetch

import (
	"io"

	"github.com/viaduct-mirror/viaduct/upstream"
)

func upstreamReq(uri string) upstream.Request {
	return upstream.Request{URI: uri, Source: testSource, MaxBytes: 1 << 20}
}

func copyAll(w io.Writer, r io.Reader) (int64, error) { return io.Copy(w, r) }
