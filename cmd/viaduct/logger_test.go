package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/node"
)

// TestJSONLogDurations: with log.format json a duration is a string with
// its unit, as an operator or a log pipeline reads it, never nanoseconds.
func TestJSONLogDurations(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, node.LogConfig{Level: "info", Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("public listener limits", "read_timeout", 30*time.Second, "took", 4296069670*time.Nanosecond,
		"grace", time.Duration(0), "wait", 3*time.Millisecond, "pass", 3*time.Minute+12*time.Second+400*time.Millisecond)
	log.WithGroup("g").Info("grouped", "every", 90*time.Second)
	dec := json.NewDecoder(&buf)
	var first, second map[string]any
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"read_timeout": "30s", "took": "4.296s", "grace": "0s", "wait": "3ms", "pass": "3m12s"} {
		if first[k] != want {
			t.Errorf("%s logged as %#v, want %q", k, first[k], want)
		}
	}
	if g, _ := second["g"].(map[string]any); g["every"] != "1m30s" {
		t.Errorf("grouped duration logged as %#v, want \"1m30s\"", second["g"])
	}
}

// TestLoggedErrorIsOneLine: an error joined from several is logged as one
// line of text, its parts separated by "; ".
func TestLoggedErrorIsOneLine(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, node.LogConfig{Level: "info", Format: format})
		if err != nil {
			t.Fatal(err)
		}
		log.Error("pass failed", "err", errors.Join(errors.New("first"), errors.New("second")))
		if got := buf.String(); !strings.Contains(got, "first; second") || strings.Contains(got, `\n`) {
			t.Errorf("%s: %s", format, got)
		}
	}
}
