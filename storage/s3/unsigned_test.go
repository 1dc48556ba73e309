package s3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/viaduct-mirror/viaduct/storage"
	"github.com/viaduct-mirror/viaduct/storage/storagetest"
)

// TestSmallPutBoundByItsMD5: a small blob's PUT sends its body unsigned,
// not in signed chunks, with a Content-MD5 that the request's signature
// covers; bytes changed on the way (here by the proxy in front of the
// server) are refused by the server, and the commit fails with nothing
// stored under the key.
func TestSmallPutBoundByItsMD5(t *testing.T) {
	srv := startServer(t)
	target, _ := url.Parse("http://" + srv.endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var tamper atomic.Bool
	var payload, signed atomic.Value
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			payload.Store(r.Header.Get("X-Amz-Content-Sha256"))
			_, after, _ := strings.Cut(r.Header.Get("Authorization"), "SignedHeaders=")
			signed.Store(strings.Split(strings.Split(after, ",")[0], ";"))
			if tamper.Load() {
				body, _ := io.ReadAll(r.Body)
				body[0] ^= 1
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	s := storeThrough(t, srv, front)
	ctx := context.Background()

	key := storagetest.Put(t, s, []byte("sent as it is"))
	if p := payload.Load(); p != "UNSIGNED-PAYLOAD" {
		t.Errorf("X-Amz-Content-Sha256 = %v, want UNSIGNED-PAYLOAD", p)
	}
	if h, _ := signed.Load().([]string); !slices.Contains(h, "content-md5") {
		t.Errorf("signed headers %v: want content-md5 among them", h)
	}
	if _, err := s.Stat(ctx, key); err != nil {
		t.Fatalf("blob sent as it is: %v", err)
	}

	tamper.Store(true)
	data := []byte("changed on the way")
	key, err := storagetest.PutErr(s, data)
	if err == nil {
		t.Fatalf("a PUT whose body was changed on the way committed %s", key)
	}
	sum := sha256.Sum256(data)
	if _, err := s.Stat(ctx, hex.EncodeToString(sum[:])); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("blob whose PUT was refused: Stat = %v, want not found", err)
	}
}
