package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func TestPolicyOtherAuthorityRefused(t *testing.T) {
	ok := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") })
	c := newClient(t, testConfig(nil), ok.URL+"/.well-known/resourcesync")

	resp, err := c.Get(context.Background(), Request{URI: ok.URL + "/a", Source: "sim"})
	if err != nil {
		t.Fatalf("GET own authority: %v", err)
	}
	readAll(t, resp)

	_, err = c.Get(context.Background(), Request{URI: other.URL + "/a", Source: "sim"})
	e := wantKind(t, err, ErrForbidden)
	if IsTransient(err) {
		t.Errorf("a policy refusal must be permanent: %v", err)
	}
	if other.hits.Load() != 0 {
		t.Errorf("the other authority got %d requests, want 0", other.hits.Load())
	}
	if e.Source != "sim" || !strings.Contains(err.Error(), other.URL) || !strings.Contains(err.Error(), `source "sim"`) {
		t.Errorf("error %q should name the Source and the URI", err)
	}
}

func TestPolicyExtraAuthorityAllowed(t *testing.T) {
	src := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	mirror := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "mirror") })
	cfg := testConfig(nil)
	cfg.AllowedAuthorities = []string{mirror.URL}
	c := newClient(t, cfg, src.URL)
	resp, err := c.Get(context.Background(), Request{URI: mirror.URL + "/x", Source: "sim"})
	if err != nil {
		t.Fatalf("GET mirror: %v", err)
	}
	if b, _ := readAll(t, resp); string(b) != "mirror" {
		t.Errorf("body %q", b)
	}
}

func TestPolicyRedirects(t *testing.T) {
	other := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "other") })
	var src *server
	src = newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/final", http.StatusMovedPermanently)
		case "/final":
			fmt.Fprint(w, "final")
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		}
	})
	c := newClient(t, testConfig(nil), src.URL)
	ctx := context.Background()

	_, err := c.Get(ctx, Request{URI: src.URL + "/away", Source: "sim"})
	e := wantKind(t, err, ErrForbidden)
	if e.Op != "redirect" || e.URI != other.URL+"/x" {
		t.Errorf("refused redirect reported as Op %q URI %q", e.Op, e.URI)
	}
	if !strings.Contains(err.Error(), src.URL+"/away") {
		t.Errorf("error %q should say where the redirect came from", err)
	}
	if other.hits.Load() != 0 {
		t.Errorf("redirect target got %d requests, want 0", other.hits.Load())
	}

	resp, err := c.Get(ctx, Request{URI: src.URL + "/here", Source: "sim"})
	if err != nil {
		t.Fatalf("same-authority redirect: %v", err)
	}
	if b, _ := readAll(t, resp); string(b) != "final" || resp.URI != src.URL+"/final" {
		t.Errorf("got %q at %s, want final at /final", b, resp.URI)
	}

	before := src.hits.Load()
	_, err = c.Get(ctx, Request{URI: src.URL + "/loop", Source: "sim"})
	wantKind(t, err, ErrPermanent)
	if n := src.hits.Load() - before; n != 6 {
		t.Errorf("redirect loop made %d requests, want 1 + 5 redirects", n)
	}
}

// TestPolicyResolvedAddress shows the dial-time check: a public-looking
// name that resolves to 127.0.0.1 is refused unless loopback is allowed.
func TestPolicyResolvedAddress(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") })
	port := s.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndexByte(port, ':')+1:]
	uri := "http://data.example.org:" + port + "/doc"
	resolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host != "data.example.org" {
			return nil, fmt.Errorf("unexpected lookup of %s", host)
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow_loopback=%v", allow), func(t *testing.T) {
			cfg := testConfig(nil)
			cfg.AllowLoopback = allow
			cfg.Resolve = resolve
			c := newClient(t, cfg, uri)
			before := s.hits.Load()
			resp, err := c.Get(context.Background(), Request{URI: uri, Source: "sim"})
			if !allow {
				wantKind(t, err, ErrForbidden)
				if !strings.Contains(err.Error(), "loopback") {
					t.Errorf("error %q should say the address is loopback", err)
				}
				if s.hits.Load() != before {
					t.Errorf("server reached despite the refusal")
				}
				return
			}
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			if b, _ := readAll(t, resp); string(b) != "hello" {
				t.Errorf("body %q", b)
			}
		})
	}
}

// TestPolicyRefusedAddresses: refused without any connection attempted.
func TestPolicyRefusedAddresses(t *testing.T) {
	resolveTo := map[string]string{
		"private.example.org": "10.1.2.3",
		"mapped.example.org":  "::ffff:127.0.0.1",
		"meta.example.org":    "169.254.169.254",
		"v6local.example.org": "::1",
	}
	cases := []struct{ base, uri string }{
		{"http://10.0.0.1/", "http://10.0.0.1/x"},
		{"http://192.168.1.1/", "http://192.168.1.1/x"},
		{"http://169.254.10.10/", "http://169.254.10.10/x"},
		{"http://[::1]:8080/", "http://[::1]:8080/x"},
		{"http://[::ffff:127.0.0.1]/", "http://[::ffff:127.0.0.1]/x"},
		{"http://[fd00::1]/", "http://[fd00::1]/x"},
		{"http://[fe80::1]/", "http://[fe80::1]/x"},
		{"http://0.0.0.0/", "http://0.0.0.0/x"},
		{"http://224.0.0.1/", "http://224.0.0.1/x"},
		{"http://[64:ff9b::7f00:1]/", "http://[64:ff9b::7f00:1]/x"},
		{"http://example.org/", "file:///etc/passwd"},
		{"http://example.org/", "ftp://example.org/pub"},
		{"http://example.org/", "http://user:pw@example.org/"},
		{"http://private.example.org/", "http://private.example.org/x"},
		{"http://mapped.example.org/", "http://mapped.example.org/x"},
		{"http://meta.example.org/", "http://meta.example.org/latest/meta-data"},
		{"http://v6local.example.org/", "http://v6local.example.org/x"},
	}
	for _, tc := range cases {
		t.Run(tc.uri, func(t *testing.T) {
			var d countingDial
			cfg := DefaultConfig()
			cfg.Dial = d.dial
			cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
				a, ok := resolveTo[host]
				if !ok {
					return nil, fmt.Errorf("no such host %s", host)
				}
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			c := newClient(t, cfg, tc.base)
			_, err := c.Get(context.Background(), Request{URI: tc.uri, Source: "sim"})
			wantKind(t, err, ErrForbidden)
			if d.n.Load() != 0 {
				t.Errorf("%d connections attempted, want 0", d.n.Load())
			}
		})
	}
}

func TestPolicyMixedAnswerRefused(t *testing.T) {
	var d countingDial
	cfg := DefaultConfig()
	cfg.Dial = d.dial
	cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.7")}, nil
	}
	c := newClient(t, cfg, "http://mixed.example.org/")
	_, err := c.Get(context.Background(), Request{URI: "http://mixed.example.org/", Source: "sim"})
	wantKind(t, err, ErrForbidden)
	if d.n.Load() != 0 {
		t.Errorf("%d connections attempted, want 0", d.n.Load())
	}
}

func TestAddrRule(t *testing.T) {
	cases := []struct {
		ip          string
		strict, lax bool // allowed with nothing allowed / with private+loopback
	}{
		{"93.184.215.14", true, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", true, true},
		{"127.0.0.1", false, true},
		{"127.9.9.9", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"10.0.0.1", false, true},
		{"172.16.5.4", false, true},
		{"192.168.0.1", false, true},
		{"100.64.0.1", false, true},
		{"fc00::1", false, true},
		{"::ffff:10.0.0.1", false, true},
		{"169.254.169.254", false, false},
		{"fe80::1%eth0", false, false},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.251", false, false},
		{"ff02::1", false, false},
		{"255.255.255.255", false, false},
	}
	for _, tc := range cases {
		ip := netip.MustParseAddr(tc.ip)
		if got := (addrRule{}).check(ip) == nil; got != tc.strict {
			t.Errorf("%s strict: allowed=%v, want %v", tc.ip, got, tc.strict)
		}
		if got := (addrRule{private: true, loopback: true}).check(ip) == nil; got != tc.lax {
			t.Errorf("%s lax: allowed=%v, want %v", tc.ip, got, tc.lax)
		}
	}
}

func TestNoPolicyRefusesEverything(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c, err := New(testConfig(nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), Request{URI: s.URL, Source: "sim"})
	wantKind(t, err, ErrForbidden)
	if s.hits.Load() != 0 {
		t.Error("server reached without a policy")
	}
}

func TestParseAuthority(t *testing.T) {
	cases := map[string]string{
		"http://Example.ORG":             "http://example.org:80",
		"https://example.org/a/b":        "https://example.org:443",
		"http://example.org.:8080/":      "http://example.org:8080",
		"http://[::1]:9/":                "http://[::1]:9",
		"HTTPS://mirror.example.org:443": "https://mirror.example.org:443",
	}
	for in, want := range cases {
		got, err := ParseAuthority(in)
		if err != nil || string(got) != want {
			t.Errorf("ParseAuthority(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"ftp://example.org", "example.org", "file:///x", "http://"} {
		if _, err := ParseAuthority(bad); err == nil {
			t.Errorf("ParseAuthority(%q) accepted", bad)
		}
	}
}
