package main

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestGenerateDescribesWhatItWrites checks the neutral Source a benchmark
// runs against: a Source Description that leads to a Resource List whose
// every entry names a served bitstream with its declared length and md5.
func TestGenerateDescribesWhatItWrites(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	if err := generate(genConfig{Dir: dir, Base: srv.URL, N: 37, Size: 1000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	caps := readDoc(t, srv.URL+"/.well-known/resourcesync", resourcesync.KindSourceDescription)
	lists := readDoc(t, caps[0].Loc, resourcesync.KindCapabilityList)
	entries := readDoc(t, lists[0].Loc, resourcesync.KindResourceList)
	if len(entries) != 37 {
		t.Fatalf("the Resource List has %d entries, want 37", len(entries))
	}
	seen := map[string]bool{}
	for _, e := range entries {
		body := get(t, e.Loc)
		sum := md5.Sum(body)
		if got, want := hex.EncodeToString(sum[:]), e.MD.Hash.Get("md5"); got != want {
			t.Errorf("%s: md5 %s, the list declares %s", e.Loc, got, want)
		}
		if int64(len(body)) != *e.MD.Length || len(body) != 1000 {
			t.Errorf("%s: %d bytes, the list declares %d", e.Loc, len(body), *e.MD.Length)
		}
		seen[e.MD.Hash.Get("md5")] = true
	}
	if len(seen) != 37 {
		t.Errorf("%d distinct bitstreams of 37: the benchmark would store duplicates", len(seen))
	}
	if _, err := os.Stat(filepath.Join(dir, "files")); err != nil {
		t.Fatal(err)
	}
}

// TestGenerateDeclaresSHA256: with SHA256 every entry also declares the
// sha-256 of the bitstream served, as an aggregator's list does; without
// it, only the md5.
func TestGenerateDeclaresSHA256(t *testing.T) {
	for _, declare := range []bool{false, true} {
		dir := t.TempDir()
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		if err := generate(genConfig{Dir: dir, Base: srv.URL, N: 5, Size: 100, Seed: 3, SHA256: declare}); err != nil {
			t.Fatal(err)
		}
		caps := readDoc(t, srv.URL+"/.well-known/resourcesync", resourcesync.KindSourceDescription)
		lists := readDoc(t, caps[0].Loc, resourcesync.KindCapabilityList)
		for _, e := range readDoc(t, lists[0].Loc, resourcesync.KindResourceList) {
			sum := sha256.Sum256(get(t, e.Loc))
			got := e.MD.Hash.Get(resourcesync.SHA256)
			switch {
			case !declare && got != "":
				t.Errorf("%s declares sha-256 %s without SHA256", e.Loc, got)
			case declare && got != hex.EncodeToString(sum[:]):
				t.Errorf("%s: sha-256 %s, the list declares %q", e.Loc, hex.EncodeToString(sum[:]), got)
			}
		}
		srv.Close()
	}
}

func readDoc(t *testing.T, uri string, want resourcesync.Kind) []*resourcesync.Entry {
	t.Helper()
	r, err := resourcesync.NewReader(bytes.NewReader(get(t, uri)), resourcesync.Limits{})
	if err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	if k := r.Header().Kind(); k != want {
		t.Fatalf("%s is a %s, want a %s", uri, k, want)
	}
	var out []*resourcesync.Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		out = append(out, e)
	}
}

func get(t *testing.T, uri string) []byte {
	t.Helper()
	resp, err := http.Get(uri)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(uri, "http://127.0.0.1:") {
		t.Fatalf("GET %s: %s", uri, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
