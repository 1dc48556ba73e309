package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/harvester"
)

// liveLine draws a baseline's progress as one line that rewrites itself,
// when its writer is a terminal; elsewhere (a file, a pipe, a test) it
// draws nothing, and the log's "baseline progress" lines say the same.
type liveLine struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	drawn bool
}

func newLiveLine(w io.Writer) *liveLine {
	f, ok := w.(*os.File)
	return &liveLine{w: w, on: ok && isTerminal(f)}
}

// isTerminal reports whether f is a character device: a terminal, not a
// file or a pipe.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// show redraws the line with p.
func (l *liveLine) show(p harvester.Progress) {
	if !l.on {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Carriage return and erase to the end of the line: the line is
	// drawn over itself.
	fmt.Fprintf(l.w, "\r\033[K%s", formatProgress(p))
	l.drawn = true
}

// end moves past the line, so that what follows starts on its own.
func (l *liveLine) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.drawn {
		fmt.Fprintln(l.w)
		l.drawn = false
	}
}

// formatProgress is the live line's text.
func formatProgress(p harvester.Progress) string {
	eta := "?"
	if p.Left >= 0 {
		eta = p.Left.Round(time.Second).String()
	}
	return fmt.Sprintf("%s baseline: listed %d, queued %d, fetched %d, failed %d, %.1f/s, %s left, %s elapsed",
		p.Source, p.Listed, p.Queued, p.Fetched, p.Failed, p.Rate, eta, p.Elapsed.Round(time.Second))
}
