package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// validateFlags are the settings of one `viaduct validate` run.
type validateFlags struct {
	strict  bool
	quiet   bool
	timeout time.Duration
	lim     resourcesync.Limits
	opts    resourcesync.Options
}

// runValidate checks each document named on the command line (a file, "-"
// for standard input, or an http(s) URL) and prints its problems as
// NAME:LINE: error|warning: message, or one summary line when it has no
// error. It fails (exit 1) when any document has an error or cannot be
// read.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", "[flags] FILE|URL|- ...", stderr)
	f := validateFlags{lim: resourcesync.DefaultLimits()}
	fs.BoolVar(&f.strict, "strict", false, "count warnings as errors")
	fs.BoolVar(&f.quiet, "quiet", false, "do not print warnings")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "time allowed to fetch each URL")
	fs.Int64Var(&f.lim.MaxBytes, "max-bytes", f.lim.MaxBytes, "largest document, in bytes as read (compressed)")
	fs.Int64Var(&f.lim.MaxDecompressed, "max-decompressed", f.lim.MaxDecompressed, "largest document after gunzip, in bytes")
	fs.IntVar(&f.lim.MaxEntries, "max-entries", f.lim.MaxEntries, "most entries in one document")
	fs.StringVar(&f.opts.Up, "up", "", "URI that rel=\"up\" links must point to (optional)")
	fs.StringVar(&f.opts.Base, "base", "", "URL a FILE was published at, to resolve its relative URIs as the harvester would (a URL is its own)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return fmt.Errorf("%w: no document to validate", errUsage)
	}
	failed := false
	for _, name := range fs.Args() {
		if !validateOne(ctx, name, f, stdout) {
			failed = true
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

// validateOne validates one document and prints what it found; it reports
// whether the document passed.
func validateOne(ctx context.Context, name string, f validateFlags, w io.Writer) bool {
	label := name
	if name == "-" {
		label = "<stdin>"
	}
	in, base, err := openDocument(ctx, name, f)
	if err != nil {
		fmt.Fprintf(w, "%s: error: %v\n", label, err)
		return false
	}
	if base != "" {
		f.opts.Base = base
	}
	rep, err := resourcesync.Validate(in, f.lim, f.opts)
	in.Close()
	if err != nil {
		fmt.Fprintf(w, "%s: error: %v\n", label, err)
		return false
	}
	for _, p := range rep.Problems {
		sev := p.Severity.String()
		if p.Severity == resourcesync.SeverityWarning {
			if f.quiet && !f.strict {
				continue
			}
			if f.strict {
				sev = "error"
			}
		}
		if p.Line > 0 {
			fmt.Fprintf(w, "%s:%d: %s: %s\n", label, p.Line, sev, p.Msg)
		} else {
			fmt.Fprintf(w, "%s: %s: %s\n", label, sev, p.Msg)
		}
	}
	if rep.Dropped > 0 {
		fmt.Fprintf(w, "%s: %d more problems not shown\n", label, rep.Dropped)
	}
	if !rep.OK(f.strict) {
		return false
	}
	fmt.Fprintf(w, "%s: %s\n", label, summaryLine(rep))
	return true
}

// summaryLine says what a document is in one line: "Change List, 4
// entries, from … until … (2 warnings)".
func summaryLine(r *resourcesync.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d %s", r.Kind, r.Entries, plural(r.Entries, "entry", "entries"))
	sep := ", "
	for _, t := range []struct {
		name string
		t    time.Time
	}{{"at", r.At}, {"completed", r.Completed}, {"from", r.From}, {"until", r.Until}} {
		if !t.t.IsZero() {
			fmt.Fprintf(&b, "%s%s %s", sep, t.name, resourcesync.FormatTime(t.t))
			sep = " "
		}
	}
	if r.Warnings > 0 {
		fmt.Fprintf(&b, " (%d %s)", r.Warnings, plural(r.Warnings, "warning", "warnings"))
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// openDocument opens a file, standard input ("-") or an http(s) URL, and
// returns the URL relative URIs resolve against: the URL's own, after
// redirects, or "" for a file. The size limits are the reader's; a URL
// also gets a timeout for the whole transfer.
func openDocument(ctx context.Context, name string, f validateFlags) (io.ReadCloser, string, error) {
	switch {
	case name == "-":
		return io.NopCloser(os.Stdin), "", nil
	case strings.HasPrefix(name, "http://"), strings.HasPrefix(name, "https://"):
		return fetchDocument(ctx, name, f.timeout)
	}
	in, err := os.Open(name)
	return in, "", err
}

// fetchDocument GETs a document. The body it returns stays under the
// timeout until closed.
func fetchDocument(ctx context.Context, uri string, timeout time.Duration) (io.ReadCloser, string, error) {
	client := &http.Client{Timeout: timeout}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", uri, err)
	}
	req.Header.Set("User-Agent", "viaduct-validate/"+version)
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetch %s: %w", uri, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, "", fmt.Errorf("fetch %s: %s", uri, resp.Status)
	}
	return resp.Body, resp.Request.URL.String(), nil
}
