package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigReportsEveryMistake: one Load of a file with mistakes in
// several Sources and sections reports each of them, on its line and by
// its path, and nothing that only follows from another.
func TestConfigReportsEveryMistake(t *testing.T) {
	yaml := `data_dir: x
sources:
  - name: a
    url: ftp://a/
  - name: b
    url: http://b/
    schedule: "every x"
    authorities: ["https://ok.example", "::bad::"]
  - url: http://c/
  - name: a
    url: http://d/
log:
  level: loud
  formt: json
harvest:
  concurrency: many
`
	f := filepath.Join(t.TempDir(), "viaduct.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(f)
	var ce *ConfigErrors
	if !errors.As(err, &ce) {
		t.Fatalf("Load: %v, want *ConfigErrors", err)
	}
	want := []struct {
		line  int
		field string
		says  string
	}{
		{4, "sources[0].url", `"ftp://a/" is not an absolute http or https URL`},
		{7, "sources[1].schedule", `"every x"`},
		{8, "sources[1].authorities[1]", `"::bad::"`},
		{9, "sources[2].name", "required"},
		{10, "sources[3].name", `"a" is already the name of sources[0]`},
		{13, "log.level", `"loud" is not debug, info, warn or error`},
		{14, "log.formt", "unknown field; did you mean format?"},
		{16, "harvest.concurrency", "`many` is not a whole number"},
	}
	if len(ce.Errs) != len(want) {
		t.Errorf("%d errors, want %d:\n%v", len(ce.Errs), len(want), err)
	}
	for i, w := range want {
		if i >= len(ce.Errs) {
			break
		}
		if got := ce.Errs[i]; got.Line != w.line || got.Field != w.field || !strings.Contains(got.Msg, w.says) {
			t.Errorf("error %d: %+v, want line %d, %s, saying %q", i, got, w.line, w.field, w.says)
		}
	}
	if first := strings.SplitN(err.Error(), "\n", 3)[1]; first != f+`:4: sources[0].url: "ftp://a/" is not an absolute http or https URL (source "a")` {
		t.Errorf("first line of the report %q, want file:line: field: message", first)
	}
}

// TestConfigSyntaxErrorOnItsLine: a key indented wrongly is reported on
// its own line, not where the block around it starts.
func TestConfigSyntaxErrorOnItsLine(t *testing.T) {
	for _, c := range []struct {
		yaml string
		line int
	}{
		{"sources:\n  - name: a\n    url: http://a.example/\n   schedule: '@hourly'\n", 4},
		{"data_dir: x\nlog:\n  level: info\n format: json\n", 4},
		{"data_dir: x\nlog:\n  level: info\n    format: json\n", 4},
	} {
		f := filepath.Join(t.TempDir(), "viaduct.yaml")
		if err := os.WriteFile(f, []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(f)
		var ce *ConfigErrors
		if !errors.As(err, &ce) || len(ce.Errs) != 1 || ce.Errs[0].Line != c.line {
			t.Errorf("%q: %v, want one error on line %d", c.yaml, err, c.line)
		}
	}
}
