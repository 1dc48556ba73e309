package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	specExamples = "../../resourcesync/testdata/spec/examples-1.0/"
	invalidDir   = "../../resourcesync/testdata/invalid/"
)

// runCLI runs viaduct with args and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func mustFile(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("test input missing: %v", err)
	}
	return path
}

func TestValidateCLIValid(t *testing.T) {
	f := mustFile(t, specExamples+"ex_21.xml")
	code, out, _ := runCLI(t, "validate", f)
	want := f + ": Change List, 4 entries, from 2013-01-02T00:00:00Z until 2013-01-03T00:00:00Z\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, output\n%q\nwant\n%q", code, out, want)
	}

	// Warnings are printed, counted in the summary, and do not fail.
	f = mustFile(t, specExamples+"ex_03.xml")
	code, out, _ = runCLI(t, "validate", f)
	want = f + ": warning: Change List has no rel=\"up\" link to its Capability List (mandatory in the spec)\n" +
		f + ": Change List, 2 entries, from 2013-01-02T00:00:00Z until 2013-01-03T00:00:00Z (1 warning)\n"
	if code != 0 || out != want {
		t.Errorf("exit %d, output\n%q\nwant\n%q", code, out, want)
	}

	// --quiet hides them.
	code, out, _ = runCLI(t, "validate", "--quiet", f)
	if code != 0 || strings.Contains(out, "warning:") || !strings.Contains(out, "(1 warning)") {
		t.Errorf("--quiet: exit %d, output\n%s", code, out)
	}
}

func TestValidateCLIErrors(t *testing.T) {
	f := mustFile(t, invalidDir+"cl_missing_change.xml")
	ok := mustFile(t, specExamples+"ex_14.xml")
	code, out, _ := runCLI(t, "validate", f, ok)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(out, f+":13: error: entry has no rs:md change attribute") {
		t.Errorf("no error line for %s in\n%s", f, out)
	}
	if strings.Contains(out, f+": Change List") {
		t.Errorf("summary printed for a document with errors:\n%s", out)
	}
	if !strings.Contains(out, ok+": Resource List, 2 entries, at 2013-01-03T09:00:00Z completed 2013-01-03T09:01:00Z\n") {
		t.Errorf("no summary for the valid document in\n%s", out)
	}

	// --strict turns warnings into errors.
	up := mustFile(t, invalidDir+"rl_missing_up.xml")
	if code, _, _ := runCLI(t, "validate", up); code != 0 {
		t.Errorf("missing up link: exit %d, want 0", code)
	}
	code, out, _ = runCLI(t, "validate", "--strict", up)
	if code != 1 || !strings.Contains(out, up+": error: Resource List has no rel=\"up\" link") {
		t.Errorf("--strict: exit %d, output\n%s", code, out)
	}

	// A file that cannot be read fails.
	code, out, _ = runCLI(t, "validate", filepath.Join(t.TempDir(), "absent.xml"))
	if code != 1 || !strings.Contains(out, "absent.xml: error: open") {
		t.Errorf("absent file: exit %d, output\n%s", code, out)
	}
}

func TestValidateCLIUsage(t *testing.T) {
	for _, args := range [][]string{{"validate"}, {"validate", "--no-such-flag", "x.xml"}} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := runCLI(t, "validate", "--help"); code != 0 || !strings.Contains(errOut, "--strict") && !strings.Contains(errOut, "-strict") {
		t.Errorf("--help: exit %d, %s", code, errOut)
	}
}

func TestValidateCLIURL(t *testing.T) {
	body, err := os.ReadFile(mustFile(t, specExamples+"ex_19.xml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/changelist.xml":
			w.Header().Set("Content-Type", "application/xml")
			w.Write(body)
		case "/big.xml":
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	u := srv.URL + "/changelist.xml"
	code, out, _ := runCLI(t, "validate", u)
	if code != 0 || out != u+": Change List, 4 entries, from 2013-01-03T00:00:00Z\n" {
		t.Errorf("exit %d, output %q", code, out)
	}
	code, out, _ = runCLI(t, "validate", srv.URL+"/missing.xml")
	if code != 1 || !strings.Contains(out, "404") {
		t.Errorf("404: exit %d, output %q", code, out)
	}
	// The size limit holds for URLs.
	code, out, _ = runCLI(t, "validate", "--max-bytes", "100", srv.URL+"/big.xml")
	if code != 1 || !strings.Contains(out, "MaxBytes") {
		t.Errorf("size limit: exit %d, output %q", code, out)
	}
}

func TestValidateCLIStdin(t *testing.T) {
	in, err := os.Open(mustFile(t, invalidDir+"cl_missing_change.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	saved := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = saved }()

	code, out, _ := runCLI(t, "validate", "-")
	if code != 1 || !strings.HasPrefix(out, "<stdin>:13: error: entry has no rs:md change attribute") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

// producerList is a Resource List as Sources built on resync before 2016
// and WEKO wrote them: no at, relative locs, times without a zone, md5 in
// base64. The harvester reads it; validate says so, with a warning each.
const producerList = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="resourceList"/>
<url><loc>records/1.xml</loc><lastmod>2018-11-06T12:13:50</lastmod><rs:md hash="md5:E+0tzxHYD0ohNZG+DFqXrA==" length="8"/></url>
<url><loc>records/2.xml</loc><lastmod>2018-11-06T12:13:51</lastmod><rs:md hash="md5:Igtq8HKF0N+Zhy3sfwBwkQ==" length="8"/></url>
</urlset>
`

// TestValidateCLIProducerTolerances: what the harvester tolerates is a
// warning (exit 0), and an error under -strict (exit 1); relative locs are
// resolved against the URL the document was read from, or --base.
func TestValidateCLIProducerTolerances(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(producerList))
	}))
	defer srv.Close()
	u := srv.URL + "/rs/resourcelist.xml"
	code, out, _ := runCLI(t, "validate", u)
	for _, want := range []string{
		u + ": warning: Resource List has no at attribute",
		u + ":4: warning: loc \"records/1.xml\" is relative: read as " + srv.URL + "/rs/records/1.xml (2 times)",
		u + ":4: warning: lastmod \"2018-11-06T12:13:50\" has no time zone: read as UTC (2 times)",
		u + ":4: warning: hash \"md5:E+0tzxHYD0ohNZG+DFqXrA==\" has a base64 digest",
		u + ": warning: capability \"resourceList\" is not in lowercase",
		u + ": Resource List, 2 entries (6 warnings)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if code != 0 || strings.Contains(out, "error:") {
		t.Errorf("exit %d, want 0 and no error:\n%s", code, out)
	}

	code, out, _ = runCLI(t, "validate", "-strict", u)
	if code != 1 || strings.Count(out, ": error: ") != 6 || strings.Contains(out, "warning:") {
		t.Errorf("-strict: exit %d, want 1 and 6 errors (the five tolerances and the missing up link):\n%s", code, out)
	}

	f := filepath.Join(t.TempDir(), "resourcelist.xml")
	if err := os.WriteFile(f, []byte(producerList), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = runCLI(t, "validate", "--base", "https://repo.example.org/rs/resourcelist.xml", f)
	if !strings.Contains(out, "read as https://repo.example.org/rs/records/1.xml") {
		t.Errorf("--base not used:\n%s", out)
	}
}
