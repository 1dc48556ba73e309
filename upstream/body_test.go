package upstream

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestTruncatedBodyDetected(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n%s", strings.Repeat("x", 40))
		buf.Flush()
	})
	c := newClient(t, testConfig(nil), s.URL)
	resp, err := c.Get(context.Background(), Request{URI: s.URL + "/bit", Source: "sim"})
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	b, err := readAll(t, resp)
	e := wantKind(t, err, ErrTruncated)
	if !IsTransient(err) || e.Op != "read" || len(b) != 40 {
		t.Errorf("%v: transient=%v op=%q read %d bytes", err, IsTransient(err), e.Op, len(b))
	}
	if !strings.Contains(err.Error(), "40 of 100 bytes") {
		t.Errorf("error %q should say how much of the body came", err)
	}
}

func TestOversizedBodyRefused(t *testing.T) {
	big := strings.Repeat("y", 5000)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/streamed" {
			// No Content-Length: the limit can only be found by reading.
			for i := 0; i < 5; i++ {
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

	_, err := c.Get(ctx, Request{URI: s.URL + "/declared", Source: "sim", MaxBytes: 1000})
	wantKind(t, err, ErrTooLarge)
	if IsTransient(err) {
		t.Errorf("too large must be permanent")
	}

	resp, err := c.Get(ctx, Request{URI: s.URL + "/streamed", Source: "sim", MaxBytes: 2500})
	if err != nil {
		t.Fatalf("GET streamed: %v", err)
	}
	b, err := readAll(t, resp)
	wantKind(t, err, ErrTooLarge)
	if len(b) != 2500 {
		t.Errorf("read %d bytes before the error, want the 2500 allowed", len(b))
	}

	resp, err = c.Get(ctx, Request{URI: s.URL + "/declared", Source: "sim", MaxBytes: 5000})
	if err != nil {
		t.Fatalf("GET at exactly the limit: %v", err)
	}
	if b, err := readAll(t, resp); err != nil || len(b) != 5000 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGzipDocuments(t *testing.T) {
	doc := "<urlset>" + strings.Repeat("<url><loc>http://example.org/r</loc></url>", 200) + "</urlset>"
	bomb := gzipped(t, strings.Repeat("\x00", 1<<20))
	z := gzipped(t, doc)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		ae := r.Header.Get("Accept-Encoding")
		w.Header().Set("X-Asked", ae)
		switch {
		case r.URL.Path == "/bomb":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		case r.URL.Path == "/corrupt":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(append(z[:len(z)-8:len(z)-8], 1, 2, 3, 4, 5, 6, 7, 8))
		case strings.Contains(ae, "gzip"):
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(z)
		default:
			io.WriteString(w, doc)
		}
	})
	c := newClient(t, testConfig(nil), s.URL)
	ctx := context.Background()

	for _, gz := range []bool{true, false} {
		resp, err := c.Get(ctx, Request{URI: s.URL + "/doc", Source: "sim", Gzip: gz})
		if err != nil {
			t.Fatalf("GET gzip=%v: %v", gz, err)
		}
		asked := resp.Header.Get("X-Asked")
		if b, err := readAll(t, resp); err != nil || string(b) != doc {
			t.Errorf("gzip=%v: body of %d bytes, %v; want the document", gz, len(b), err)
		}
		if want := map[bool]string{true: "gzip", false: "identity"}[gz]; asked != want {
			t.Errorf("gzip=%v: Accept-Encoding %q, want %q", gz, asked, want)
		}
	}

	resp, err := c.Get(ctx, Request{URI: s.URL + "/bomb", Source: "sim", Gzip: true, MaxBytes: 64 << 10})
	if err != nil {
		t.Fatalf("GET bomb: %v", err)
	}
	b, err := readAll(t, resp)
	wantKind(t, err, ErrTooLarge)
	if len(b) != 64<<10 {
		t.Errorf("decoded %d bytes of the bomb, want the 64 KiB allowed", len(b))
	}

	resp, err = c.Get(ctx, Request{URI: s.URL + "/corrupt", Source: "sim", Gzip: true})
	if err != nil {
		t.Fatalf("GET corrupt: %v", err)
	}
	_, err = readAll(t, resp)
	wantKind(t, err, ErrPermanent)
}

func TestConditionalGet(t *testing.T) {
	const etag = `"v1"`
	const lastMod = "Tue, 03 Mar 2026 10:00:00 GMT"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastMod)
		if r.Header.Get("If-None-Match") == etag || r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		io.WriteString(w, "content")
	})
	c := newClient(t, testConfig(nil), s.URL)
	ctx := context.Background()
	first, err := c.Get(ctx, Request{URI: s.URL, Source: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, first)
	if first.NotModified || first.ETag != etag || first.LastModified != lastMod {
		t.Fatalf("first GET: NotModified=%v ETag=%q LastModified=%q", first.NotModified, first.ETag, first.LastModified)
	}
	for _, req := range []Request{
		{URI: s.URL, Source: "sim", ETag: first.ETag},
		{URI: s.URL, Source: "sim", LastModified: first.LastModified},
	} {
		resp, err := c.Get(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := readAll(t, resp)
		if !resp.NotModified || resp.Status != http.StatusNotModified || len(b) != 0 || err != nil {
			t.Errorf("conditional GET: NotModified=%v status=%d body %q %v", resp.NotModified, resp.Status, b, err)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	var ua string
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		ua = r.UserAgent()
		w.Header().Add("Link", `</cl.xml>; rel="resourcesync", <http://example.org/x>; rel="describedby alternate"`)
		w.Header().Add("Link", `<other.xml>; rel=up`)
		io.WriteString(w, "x")
	})
	cfg := testConfig(nil)
	cfg.UserAgent = DefaultUserAgent("1.2.3")
	c := newClient(t, cfg, s.URL)
	resp, err := c.Get(context.Background(), Request{URI: s.URL + "/dir/page.html", Source: "sim"})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if !strings.HasPrefix(ua, "viaduct/1.2.3 ") {
		t.Errorf("User-Agent %q", ua)
	}
	want := []string{s.URL + "/cl.xml", "http://example.org/x", s.URL + "/dir/other.xml"}
	if len(resp.Links) != 3 {
		t.Fatalf("links %+v", resp.Links)
	}
	for i, l := range resp.Links {
		if l.Target != want[i] {
			t.Errorf("link %d target %q, want %q", i, l.Target, want[i])
		}
	}
	if !resp.Links[0].HasRel("resourcesync") || !resp.Links[1].HasRel("alternate") || !resp.Links[2].HasRel("up") {
		t.Errorf("rels %+v", resp.Links)
	}
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		err  *Error
		want string
	}{
		{&Error{Source: "sim", URI: "http://h/x", Op: "GET", Status: 503, Attempts: 4, Kind: ErrTransient},
			`source "sim": GET http://h/x: 503 Service Unavailable after 4 attempts`},
		{&Error{Source: "sim", URI: "http://h/x", Op: "GET", Status: 404, Attempts: 1, Kind: ErrNotFound},
			`source "sim": GET http://h/x: 404 Not Found`},
		{&Error{Source: "sim", URI: "http://h/x", Op: "GET", Status: 200, Kind: ErrTooLarge, Err: fmt.Errorf("Content-Length 9 exceeds the limit of 5 bytes")},
			`source "sim": GET http://h/x: Content-Length 9 exceeds the limit of 5 bytes`},
		{&Error{Source: "sim", URI: "ftp://h/x", Op: "GET", Kind: ErrForbidden},
			`source "sim": GET ftp://h/x: forbidden by policy`},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
