package fetch

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// TestChangeLoggerLogsAsWith: a change's logger writes what Logger.With
// with the change's attributes writes, for records logged directly, after
// more attributes and inside a group, and nothing below the handler's
// level.
func TestChangeLoggerLogsAsWith(t *testing.T) {
	sha := strings.Repeat("ab12", 16)
	c := &viaduct.Change{Source: "s", URI: "http://s/a b", Hash: resourcesync.Hashes{{Alg: resourcesync.SHA256, Value: sha}}}
	logAll := func(log *slog.Logger) {
		log.Debug("dropped", "k", 1)
		log.Warn("retry", "err", "refused")
		log.With("delivered", 2).Info("again", "k", "v")
		log.WithGroup("g").With("a", 1).Error("grouped", "k", "v")
	}
	var lazy, eager bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}
	logAll(changeLogger(slog.New(slog.NewTextHandler(&lazy, opts)), c))
	logAll(slog.New(slog.NewTextHandler(&eager, opts)).With("source", c.Source, "uri", c.URI, "sha256", sha))
	if lazy.String() != eager.String() {
		t.Fatalf("change logger wrote\n%s\nwant, as Logger.With writes,\n%s", lazy.String(), eager.String())
	}
	if n := bytes.Count(lazy.Bytes(), []byte("\n")); n != 3 {
		t.Fatalf("change logger wrote %d records, want 3:\n%s", n, lazy.String())
	}
}
