package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestUnrequestedEncodingRefused: a body in an encoding that was not asked
// for is refused before a byte of it is decoded.
func TestUnrequestedEncodingRefused(t *testing.T) {
	z := gzipped(t, strings.Repeat("\x00", 1<<20))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", strings.TrimPrefix(r.URL.Path, "/"))
		w.Write(z)
	})
	c := newClient(t, testConfig(nil), s.URL)
	for _, tc := range []struct {
		enc  string
		gzip bool
	}{{"gzip", false}, {"br", true}, {"deflate", false}, {"gzip,gzip", true}} {
		_, err := c.Get(context.Background(), Request{URI: s.URL + "/" + tc.enc, Source: "sim", Gzip: tc.gzip})
		wantKind(t, err, ErrPermanent)
		if !strings.Contains(err.Error(), "not asked for") {
			t.Errorf("%s (gzip asked: %v): %v, want it to say the encoding was not asked for", tc.enc, tc.gzip, err)
		}
	}
}

// TestDeclaredLengthBoundsBody: with a declared length, a longer body is
// refused at its Content-Length, or one byte past the declared length
// when it has none, and a body of the declared length passes.
func TestDeclaredLengthBoundsBody(t *testing.T) {
	big := strings.Repeat("y", 50_000)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/streamed" {
			for i := 0; i < 50; i++ {
				io.WriteString(w, big[:1000])
				http.NewResponseController(w).Flush()
			}
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		io.WriteString(w, big)
	})
	c := newClient(t, testConfig(nil), s.URL)
	ctx := context.Background()
	declared := int64(1000)

	_, err := c.Get(ctx, Request{URI: s.URL + "/declared", Source: "sim", Declared: &declared})
	wantKind(t, err, ErrTooLarge)
	if !strings.Contains(err.Error(), "declared length of 1000") {
		t.Errorf("%v: want it to name the declared length", err)
	}

	resp, err := c.Get(ctx, Request{URI: s.URL + "/streamed", Source: "sim", Declared: &declared})
	if err != nil {
		t.Fatalf("GET streamed: %v", err)
	}
	raw := resp.Body.(*body)
	b, err := readAll(t, resp)
	wantKind(t, err, ErrTooLarge)
	if len(b) != 1000 || raw.rawN != 1001 {
		t.Errorf("read %d bytes from the Source, passed on %d; want 1001 and 1000", raw.rawN, len(b))
	}

	exact := int64(len(big))
	resp, err = c.Get(ctx, Request{URI: s.URL + "/declared", Source: "sim", Declared: &exact})
	if err != nil {
		t.Fatalf("GET of the declared length: %v", err)
	}
	if b, err := readAll(t, resp); err != nil || len(b) != len(big) {
		t.Errorf("at the declared length: %d bytes, %v", len(b), err)
	}
}
