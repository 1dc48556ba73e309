package sim

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

func TestConditionalGET(t *testing.T) {
	src, base := serve(t, Config{Resources: 3})
	for _, p := range []string{PathDescription, PathCapabilities, PathResourceList, PathChangeList, "/changelist-0.xml", "/res/1"} {
		resp, _ := get(t, base+p)
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || etag == "" {
			t.Fatalf("%s: %s, ETag %q", p, resp.Status, etag)
		}
		again, body := get(t, base+p, "If-None-Match", etag)
		if again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("%s with If-None-Match %s: %s, %d bytes", p, etag, again.Status, len(body))
		}
	}
	resp, _ := get(t, base+PathResourceList)
	bs, _ := get(t, base+"/res/1")
	src.Update(3)
	if again, _ := get(t, base+PathResourceList, "If-None-Match", resp.Header.Get("ETag")); again.StatusCode != http.StatusOK {
		t.Fatalf("Resource List after a change: %s", again.Status)
	}
	if again, _ := get(t, base+"/res/1", "If-None-Match", bs.Header.Get("ETag")); again.StatusCode != http.StatusOK {
		t.Fatalf("bitstream after its update: %s", again.Status)
	}
}

func TestGzip(t *testing.T) {
	_, base := serve(t, Config{Resources: 3})
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	t.Cleanup(client.CloseIdleConnections)
	req, _ := http.NewRequest(http.MethodGet, base+PathResourceList, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parse(zr)
	if err != nil {
		t.Fatal(err)
	}
	if d.Header.Kind() != resourcesync.KindResourceList || len(d.Entries) != 3 {
		t.Fatalf("gzipped Resource List: %s with %d entries", d.Header.Kind(), len(d.Entries))
	}

	req, _ = http.NewRequest(http.MethodGet, base+PathResourceList, nil)
	plain, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Body.Close()
	b, _ := io.ReadAll(plain.Body)
	if plain.Header.Get("Content-Encoding") != "" || len(b) < 5 || string(b[:5]) != "<?xml" {
		t.Fatalf("without Accept-Encoding: %q, body %.20q", plain.Header.Get("Content-Encoding"), b)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"time_form", Config{TimeForm: "2.0"}},
		{"min_size", Config{MinSize: 10, MaxSize: 5}},
		{"part_size", Config{PartSize: 60000}},
		{"hashes", Config{Hashes: []string{"sha-1"}}},
		{"period", Config{Period: time.Millisecond}},
		{"base_url", Config{BaseURL: "ftp://x"}},
		{"resources", Config{Resources: -1}},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), tc.name) {
			t.Errorf("%s: error %v, want one naming the field", tc.name, err)
		}
	}
}
