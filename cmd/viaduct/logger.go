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
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: readable}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// readable writes durations and errors as people and log pipelines read
// them, in one place for every line of the process.
//
// A duration gets its unit ("30s", "4.296s"): the JSON handler would
// otherwise write its nanoseconds, a number with no unit. From a second
// to a minute it keeps milliseconds, past a minute seconds; below a second
// it is left whole.
//
// An error made of several (errors.Join puts one a line) is written on
// one line, its parts separated by "; ", so that one failure is one line
// to read and to grep.
func readable(groups []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindDuration:
		d := a.Value.Duration()
		switch {
		case d >= time.Minute || d <= -time.Minute:
			d = d.Round(time.Second)
		case d >= time.Second || d <= -time.Second:
			d = d.Round(time.Millisecond)
		}
		return slog.String(a.Key, d.String())
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok && strings.Contains(err.Error(), "\n") {
			return slog.String(a.Key, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	return a
}
