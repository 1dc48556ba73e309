package sim

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
)

// TestListenWhileChanging serves a Source that Run keeps changing, reading
// its lists meanwhile, and checks that requests are logged and counted.
func TestListenWhileChanging(t *testing.T) {
	src, err := New(Config{Resources: 200, Rate: 500, PartSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	var logBuf testutil.Buffer
	srv, err := Listen("127.0.0.1:0", src, slog.New(slog.NewTextHandler(&logBuf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") || src.BaseURL() != srv.URL {
		t.Fatalf("URL %q, base %q", srv.URL, src.BaseURL())
	}
	for range 5 {
		idx := read(t, srv.URL+PathResourceList)
		for _, p := range idx.Entries {
			read(t, p.Loc)
		}
		for _, l := range read(t, srv.URL+PathChangeList).Entries {
			read(t, l.Loc)
		}
	}
	if n := src.Requests()[PathResourceList]; n != 5 {
		t.Fatalf("Requests: %d for the Resource List, want 5", n)
	}
	if resp, _ := get(t, srv.URL+"/res/nope"); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/res/nope: %s", resp.Status)
	}
	eventually(t, 5*time.Second, "the request log", func() bool {
		return strings.Contains(logBuf.String(), "uri="+PathResourceList)
	})
}
