package resourcesync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// specDir holds every example of the specs, one file each.
const specDir = "testdata/spec"

// noUp is the warning for the walkthrough examples (1 to 8), which leave
// out the rel="up" link that sections 10 to 13 make mandatory.
const noUp = `no rel="up" link`

// exampleWarnings lists the warnings each spec example is expected to
// give; an example not listed must give none. None may give an error.
var exampleWarnings = map[string][]struct {
	line int
	sub  string
}{
	"examples-1.0/ex_01.xml": {{0, noUp}},
	"examples-1.0/ex_02.xml": {{0, noUp}},
	"examples-1.0/ex_03.xml": {{0, noUp}},
	"examples-1.0/ex_04.xml": {{0, noUp}, {6, "lacks rs:md type and length"}},
	"examples-1.0/ex_05.xml": {{0, noUp}},
	"examples-1.0/ex_08.xml": {{0, noUp}},
	"examples-1.0/ex_24.xml": {{8, `"gsiftp://gridftp.example.com/res1" is not an http or https URI`}},
	// Example 27's sha-256 values are base64url, but for the last one.
	"examples-1.0/ex_27.xml": {{8, "base64 digest"}, {22, "cannot be verified"}},
	"examples-1.1/ex_01.xml": {{0, noUp}},
	"examples-1.1/ex_02.xml": {{0, noUp}},
	"examples-1.1/ex_03.xml": {{0, noUp}},
	"examples-1.1/ex_04.xml": {{0, noUp}, {6, "lacks rs:md type and length"}},
	"examples-1.1/ex_05.xml": {{0, noUp}},
	"examples-1.1/ex_08.xml": {{0, noUp}},
	// The 1.1 revision dropped lastmod from some changes without giving
	// them a datetime.
	"examples-1.1/ex_19.xml": {{22, "neither lastmod nor rs:md datetime"}},
	"examples-1.1/ex_24.xml": {{8, `"gsiftp://gridftp.example.com/res1" is not an http or https URI`}},
	"examples-1.1/ex_27.xml": {{8, "neither lastmod"}, {8, "base64 digest"}, {20, "neither lastmod"}, {20, "cannot be verified"}},
	"examples-1.1/ex_30.xml": {{8, "neither lastmod nor rs:md datetime"}},
}

func TestValidateSpecExamples(t *testing.T) {
	seen := 0
	for _, dir := range []string{"examples-1.0", "examples-1.1", "examples-notification"} {
		files, err := filepath.Glob(filepath.Join(specDir, dir, "*.xml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no spec examples in %s (%v): they are part of the test", filepath.Join(specDir, dir), err)
		}
		for _, f := range files {
			name := dir + "/" + filepath.Base(f)
			seen++
			t.Run(name, func(t *testing.T) {
				r := validateFile(t, f)
				if r.Errors > 0 {
					t.Errorf("%d errors:\n%s", r.Errors, dump(r))
				}
				want := exampleWarnings[name]
				if r.Warnings != len(want) {
					t.Errorf("%d warnings, want %d:\n%s", r.Warnings, len(want), dump(r))
				}
				for _, w := range want {
					wantProblem(t, r, SeverityWarning, w.line, w.sub)
				}
				if r.Kind == KindUnknown || r.Kind == KindSitemap || r.Entries == 0 {
					t.Errorf("summary %+v", r.Summary)
				}
			})
		}
	}
	if seen < 60 {
		t.Errorf("only %d spec examples found", seen)
	}
}

// TestValidateInvalid checks that each broken variant of a spec example in
// testdata/invalid gives the problem it was made for, where it was made.
func TestValidateInvalid(t *testing.T) {
	for _, c := range []struct {
		file string
		sev  Severity
		line int
		sub  string
	}{
		// What the harvester reads, the validator warns about.
		{"cl_missing_from.xml", SeverityWarning, 0, "Change List has no from attribute"},
		{"cl_not_chronological.xml", SeverityWarning, 21, "is before the one above it (2013-01-02T13:00:00Z): the changes are not in forward chronological order"},
		{"cl_bad_datetime.xml", SeverityError, 15, `datetime "2013-01-03 13h00"`},
		{"caplist_unknown_capability.xml", SeverityError, 21, `unknown capability "changedumps"`},
		{"rl_missing_up.xml", SeverityWarning, 0, `Resource List has no rel="up" link`},
		{"cl_missing_change.xml", SeverityError, 13, "no rs:md change attribute"},
		{"rdm_missing_path.xml", SeverityError, 17, "no rs:md path"},
		{"cl_from_after_until.xml", SeverityError, 0, "from 2013-01-04T00:00:00Z is after until 2013-01-03T00:00:00Z"},
		{"cl_from_after_until.xml", SeverityWarning, 11, "before the document's from"},
		{"cl_entry_after_until.xml", SeverityWarning, 26, "after the document's until 2013-01-03T00:00:00Z"},
		{"cli_closed_open_child.xml", SeverityError, 19, "Change List Index is closed"},
		{"rl_bad_hash.xml", SeverityError, 14, `hash "md5"`},
		{"rl_negative_length.xml", SeverityError, 14, `length "-8876"`},
		{"cl_missing_loc.xml", SeverityError, 21, "no <loc>"},
		{"notification_missing_until.xml", SeverityError, 0, "Change Notification has no until"},
		{"notification_not_chronological.xml", SeverityWarning, 18, "forward chronological order"},
		{"cd_package_not_zip.xml", SeverityWarning, 8, `package type "application/x-tar"`},
		{"sd_lists_resourcelist.xml", SeverityError, 13, "Capability Lists only"},
		{"not_a_sitemap.xml", SeverityError, 1, "not a Sitemap document"},
	} {
		t.Run(c.file+"/"+c.sub, func(t *testing.T) {
			r := validateFile(t, filepath.Join("testdata", "invalid", c.file))
			wantProblem(t, r, c.sev, c.line, c.sub)
			// cl_from_after_until.xml also has its header's error.
			if c.sev == SeverityWarning && r.Errors > 0 && c.file != "cl_from_after_until.xml" {
				t.Errorf("want only warnings:\n%s", dump(r))
			}
		})
	}
	// Every file there is in the table.
	files, _ := filepath.Glob(filepath.Join("testdata", "invalid", "*"))
	if len(files) != 18 {
		t.Errorf("%d files in testdata/invalid, the table covers 18", len(files))
	}
}

func validateFile(t *testing.T, path string) *Report {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Validate(f, Limits{}, Options{})
	if err != nil {
		t.Fatalf("validate %s: %v", path, err)
	}
	for _, p := range r.Problems {
		if strings.TrimSpace(p.Msg) == "" {
			t.Errorf("empty message at line %d", p.Line)
		}
	}
	return r
}
