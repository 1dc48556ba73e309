package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// source writes a Source directory of two files and a Resource List
// declaring md5s (the second one's wrong if badMD5), served over HTTP.
func source(t *testing.T, badMD5 bool) (dir string) {
	t.Helper()
	dir = t.TempDir()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	bodies := map[string]string{"files/00/0000000": "first bitstream", "files/01/0000001": "second bitstream"}
	var list strings.Builder
	list.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
`)
	for _, rel := range []string{"files/00/0000000", "files/01/0000001"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(bodies[rel]), 0o644); err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum([]byte(bodies[rel]))
		if badMD5 && rel == "files/01/0000001" {
			sum = md5.Sum([]byte("something else"))
		}
		fmt.Fprintf(&list, "<url><loc>%s/%s</loc><rs:md hash=\"md5:%s\" length=\"%d\"/></url>\n", srv.URL, rel, hex.EncodeToString(sum[:]), len(bodies[rel]))
	}
	list.WriteString("</urlset>\n")
	if err := os.WriteFile(filepath.Join(dir, "resourcelist-1.xml"), []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGetWritesEveryListedBitstream(t *testing.T) {
	for _, verify := range []bool{false, true} {
		t.Run(fmt.Sprintf("verify=%v", verify), func(t *testing.T) {
			src := source(t, false)
			out := filepath.Join(t.TempDir(), "out")
			if err := run(context.Background(), []string{"-dir", src, "-out", out, fmt.Sprintf("-verify=%v", verify)}); err != nil {
				t.Fatal(err)
			}
			for _, rel := range []string{"files/00/0000000", "files/01/0000001"} {
				want, _ := os.ReadFile(filepath.Join(src, rel))
				got, err := os.ReadFile(filepath.Join(out, rel))
				if err != nil || string(got) != string(want) {
					t.Errorf("%s: got %q, %v; want %q", rel, got, err, want)
				}
			}
		})
	}
}

func TestVerifyRejectsAWrongDigest(t *testing.T) {
	src := source(t, true)
	out := filepath.Join(t.TempDir(), "out")
	err := run(context.Background(), []string{"-dir", src, "-out", out, "-verify"})
	if err == nil || !strings.Contains(err.Error(), "/files/01/0000001: md5") {
		t.Fatalf("err = %v; want the second bitstream's md5 refused", err)
	}
	// Without -verify the same list is fetched as it is.
	if err := run(context.Background(), []string{"-dir", src, "-out", filepath.Join(t.TempDir(), "out")}); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesAPathOutsideOut(t *testing.T) {
	dir := t.TempDir()
	list := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
<url><loc>http://127.0.0.1:1/../outside</loc></url>
</urlset>
`
	if err := os.WriteFile(filepath.Join(dir, "resourcelist-1.xml"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	err := run(context.Background(), []string{"-dir", dir, "-out", out})
	if err == nil || !strings.Contains(err.Error(), "would be written outside") {
		t.Fatalf("err = %v; want the path refused", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(out), "outside")); !os.IsNotExist(err) {
		t.Fatalf("a file was written outside -out: %v", err)
	}
}
