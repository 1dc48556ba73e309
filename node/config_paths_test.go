package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigErrorsNameYAMLPaths: a misspelt field and a value of the
// wrong kind are reported by their path in the file, the misspelt one with
// the field meant, and no Go type names.
func TestConfigErrorsNameYAMLPaths(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"sources:\n  - name: a\n    url: http://a.example/\n  - name: b\n    url: http://b.example/\n    schedul: \"@every 1m\"\n",
			"sources[1].schedul: unknown field; did you mean schedule?"},
		{"harvest:\n  pass_timeout: forever\nsources:\n  - name: a\n    url: http://a.example/\n",
			"harvest.pass_timeout: `forever` is not a duration such as 30s or 5m"},
		{"admn:\n  listen: 127.0.0.1:1\nsources:\n  - name: a\n    url: http://a.example/\n",
			"admn: unknown field; did you mean admin?"},
	} {
		f := filepath.Join(t.TempDir(), "viaduct.yaml")
		if err := os.WriteFile(f, []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(f)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want it to say %q", err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "harvester.") || strings.Contains(err.Error(), "time.Duration")) {
			t.Errorf("error names Go types: %v", err)
		}
	}
}
