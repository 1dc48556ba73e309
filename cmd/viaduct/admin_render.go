package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/harvester"
)

// The admin tables are for people: times as how long ago, durations
// rounded, one Source a line; `-o json` is the form for scripts.

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// decodeAnswer reads an answer of the admin API into v.
func decodeAnswer(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("reading the node's answer (try -o json): %w", err)
	}
	return nil
}

func renderStatus(w io.Writer, body []byte, now time.Time) error {
	var n admin.NodeInfo
	if err := decodeAnswer(body, &n); err != nil {
		return err
	}
	t := newTable(w)
	fmt.Fprintf(t, "version\t%s\n", n.Version)
	fmt.Fprintf(t, "up\t%s (since %s)\n", admin.HumanDuration(now.Sub(n.Started)), stamp(n.Started))
	fmt.Fprintf(t, "ready\t%s\n", yesNo(n.Ready, "yes", "NO"))
	for _, c := range n.Conditions {
		fmt.Fprintf(t, "  %s\t%s\n", c.Name, joinNonEmpty(": ", yesNo(c.OK, "ok", "not ok"), c.Reason))
	}
	nats := yesNo(n.NATS.Connected, "connected", "DISCONNECTED") + " " + n.NATS.URL
	if n.NATS.Embedded {
		nats += " (embedded)"
	}
	fmt.Fprintf(t, "NATS\t%s\n", joinNonEmpty(": ", nats, n.NATS.Error))
	for _, s := range n.NATS.Streams {
		fmt.Fprintf(t, "  %s\t%s, %s\n", s.Name, countOf(int64(s.Messages), "message"), bytesOf(int64(min(s.Bytes, 1<<62))))
	}
	fmt.Fprintf(t, "blob store\t%s\n", joinNonEmpty(": ", n.Blobs.Kind+" "+n.Blobs.Where+", "+yesNo(n.Blobs.Reachable, "reachable", "UNREACHABLE"), n.Blobs.Error))
	c := n.Catalog
	fmt.Fprintf(t, "catalog\t%s\n", joinNonEmpty(": ", fmt.Sprintf("%s, %s; event %d of %d applied (%d behind)",
		countOf(c.Resources, "resource"), bytesOf(c.Bytes), c.LastApplied, c.LastEvent, c.Lag), c.Error))
	fmt.Fprintf(t, "subscribers\t%d\n", len(n.Subscribers))
	return t.Flush()
}

func renderSources(w io.Writer, body []byte, now time.Time) error {
	var vs []admin.SourceView
	if err := decodeAnswer(body, &vs); err != nil {
		return err
	}
	t := newTable(w)
	fmt.Fprintln(t, "SOURCE\tSTATE\tLAST PASS\tLAST SUCCESS\tCURSOR LAG\tQUEUED\tFETCHED\tFAILED\tDEAD LETTERS")
	for _, v := range vs {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", v.Name, state(v), lastPass(v.LastPass, now), ago(v.LastSuccess, now),
			lag(v), v.Queued, v.Fetched, v.Failed, v.DeadLetters)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	// A Source whose last pass failed gets its error's first 160
	// characters, whether or not a new pass is under way.
	for _, v := range vs {
		if v.LastPass != nil && v.LastPass.Error != "" {
			fmt.Fprintf(w, "\n%s, last pass failed %s: %s\n  (viaduct admin sources %s shows it in full)\n",
				v.Name, ago(v.LastPass.End, now), firstLine(v.LastPass.Error, 160), v.Name)
		}
	}
	return nil
}

// renderSource shows one Source, its last error in full.
func renderSource(w io.Writer, body []byte, now time.Time) error {
	var v admin.SourceView
	if err := decodeAnswer(body, &v); err != nil {
		return err
	}
	t := newTable(w)
	fmt.Fprintf(t, "source\t%s\n", v.Name)
	fmt.Fprintf(t, "url\t%s\n", v.URL)
	fmt.Fprintf(t, "collection\t%s\n", v.Collection)
	fmt.Fprintf(t, "schedule\t%s\n", v.Schedule)
	fmt.Fprintf(t, "state\t%s\n", state(v))
	if v.LeasedBy != "" {
		fmt.Fprintf(t, "leased by\t%s\n", v.LeasedBy)
	}
	fmt.Fprintf(t, "last pass\t%s\n", lastPass(v.LastPass, now))
	fmt.Fprintf(t, "last success\t%s\n", ago(v.LastSuccess, now))
	if v.Cursor.IsZero() {
		fmt.Fprintf(t, "cursor\tnone\n")
	} else {
		fmt.Fprintf(t, "cursor\t%s (%s behind)\n", stamp(v.Cursor), v.CursorLag)
	}
	fmt.Fprintf(t, "last baseline\t%s\n", ago(v.Baseline, now))
	fmt.Fprintf(t, "changes\t%d queued, %d fetched, %d failed since the node started\n", v.Queued, v.Fetched, v.Failed)
	fmt.Fprintf(t, "dead letters\t%d\n", v.DeadLetters)
	fmt.Fprintf(t, "recent passes\t%s\n", recent(v.Recent))
	if err := t.Flush(); err != nil {
		return err
	}
	if e := v.LastError; e != nil {
		fmt.Fprintf(w, "\nlast error, %s (pass of %s):\n  %s\n", ago(e.End, now), admin.HumanDuration(e.End.Sub(e.Start)),
			strings.ReplaceAll(e.Error, "\n", "\n  "))
	}
	return nil
}

func state(v admin.SourceView) string {
	s := v.State
	if v.Rebaselining {
		s += " (re-baseline)"
	}
	if v.Pending {
		s += ", pass asked for"
	}
	return s
}

func lastPass(p *harvester.PassRecord, now time.Time) string {
	if p == nil {
		return "never"
	}
	out := ago(p.End, now) + ", took " + admin.HumanDuration(p.End.Sub(p.Start))
	if p.Error != "" {
		out += ", failed"
	}
	return out
}

func lag(v admin.SourceView) string {
	if v.Cursor.IsZero() {
		return "-"
	}
	return v.CursorLag.String()
}

// recent is the last passes, oldest first: + a success, x a failure.
func recent(ps []harvester.PassRecord) string {
	if len(ps) == 0 {
		return "none"
	}
	var b strings.Builder
	failed := 0
	for _, p := range ps {
		if p.Error != "" {
			b.WriteByte('x')
			failed++
		} else {
			b.WriteByte('+')
		}
	}
	return fmt.Sprintf("%s (%d of %d failed, oldest first)", b.String(), failed, len(ps))
}

func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return admin.HumanDuration(now.Sub(t)) + " ago"
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func yesNo(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

func countOf(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// firstLine is s's first line, cut to at most n characters.
func firstLine(s string, n int) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	} else if cut {
		return s + " …"
	}
	return s
}

func bytesOf(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
