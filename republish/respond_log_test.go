package republish

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
)

// goneWriter is a Destination that closed its connection: every write
// fails as the kernel reports it.
type goneWriter struct{ h http.Header }

func (w *goneWriter) Header() http.Header       { return w.h }
func (w *goneWriter) WriteHeader(int)           {}
func (w *goneWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestClientGoneIsNotAnError: a Destination closing the connection
// before a document ends is logged at debug, never at error.
func TestClientGoneIsNotAnError(t *testing.T) {
	f := newFixture(t, Config{})
	f.fill()
	var logs bytes.Buffer
	f.srv.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	req := httptest.NewRequest(http.MethodGet, "/alpha/resourcelist.xml", nil)
	func() {
		defer func() {
			if r := recover(); r != nil && !errors.Is(r.(error), http.ErrAbortHandler) {
				panic(r)
			}
		}()
		f.srv.Handler().ServeHTTP(&goneWriter{h: http.Header{}}, req)
	}()
	out := logs.String()
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("a client gone was logged at error:\n%s", out)
	}
	if !strings.Contains(out, "level=DEBUG") || !strings.Contains(out, "client went away") {
		t.Errorf("a client gone was not logged at debug:\n%s", out)
	}
}
