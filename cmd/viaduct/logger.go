package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/node"
)

// newLogger builds the process's slog logger from the log section. Every
// command that logs builds its logger here, so that its lines read alike.
func newLogger(w io.Writer, c node.LogConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(c.Level))); err != nil {
		return nil, fmt.Errorf("log.level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: readableDurations}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// readableDurations writes a duration as people and log pipelines read
// it ("30s", "4.296s"): the JSON handler would otherwise write its
// nanoseconds, a number with no unit. From a second to a minute it keeps
// milliseconds, past a minute seconds; below a second it is left whole.
func readableDurations(groups []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	switch {
	case d >= time.Minute || d <= -time.Minute:
		d = d.Round(time.Second)
	case d >= time.Second || d <= -time.Second:
		d = d.Round(time.Millisecond)
	}
	return slog.String(a.Key, d.String())
}
