package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
)

func TestLiveLineDrawsOverItselfOnlyOnATerminal(t *testing.T) {
	p := harvester.Progress{Source: "sim", Listed: 1000, Queued: 900, Fetched: 640, Failed: 2, Rate: 212.34, Left: 1200 * time.Millisecond, Elapsed: 3 * time.Second}
	want := "sim baseline: listed 1000, queued 900, fetched 640, failed 2, 212.3/s, 1s left, 3s elapsed"
	if got := formatProgress(p); got != want {
		t.Errorf("line %q, want %q", got, want)
	}

	var pipe bytes.Buffer
	l := newLiveLine(&pipe) // not a terminal
	l.show(p)
	l.end()
	if pipe.Len() != 0 {
		t.Errorf("drew %q on a writer that is not a terminal", pipe.String())
	}

	var term bytes.Buffer
	l = &liveLine{w: &term, on: true}
	l.show(p)
	p.Fetched = 900
	l.show(p)
	l.end()
	out := term.String()
	if strings.Count(out, "\r\033[K") != 2 || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "900, failed 2, 212.3/s, 1s left, 3s elapsed\n") {
		t.Errorf("terminal got %q: want each update drawn over the line, one newline at the end", out)
	}
}
