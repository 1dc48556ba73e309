package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/admin"
)

func renderDeadLetters(w io.Writer, body []byte, now time.Time) error {
	var ds []admin.DeadLetterView
	if err := decodeAnswer(body, &ds); err != nil {
		return err
	}
	if len(ds) == 0 {
		fmt.Fprintln(w, "no dead letters")
		return nil
	}
	t := newTable(w)
	fmt.Fprintln(t, "SEQ\tDEAD-LETTERED\tSOURCE\tKIND\tREASON")
	for _, d := range ds {
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%s\n", d.Seq, ago(d.At, now), d.Source, d.Kind, firstLine(d.Reason, 100))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s (viaduct admin deadletter SEQ shows one in full)\n", countOf(int64(len(ds)), "dead letter"))
	return nil
}

func renderDeadLetter(w io.Writer, body []byte, now time.Time) error {
	var d admin.DeadLetterView
	if err := decodeAnswer(body, &d); err != nil {
		return err
	}
	t := newTable(w)
	fmt.Fprintf(t, "dead letter\t%d\n", d.Seq)
	fmt.Fprintf(t, "dead-lettered\t%s (%s)\n", ago(d.At, now), stamp(d.At))
	fmt.Fprintf(t, "source\t%s\n", d.Source)
	fmt.Fprintf(t, "kind\t%s\n", d.Kind)
	fmt.Fprintf(t, "delivered\t%d times, %d retries\n", d.Delivered, d.Retries)
	fmt.Fprintf(t, "from\t%s, sequence %d\n", d.Stream, d.OrigSeq)
	keys := make([]string, 0, len(d.Evidence))
	for k := range d.Evidence {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(t, "evidence %s\t%s\n", k, d.Evidence[k])
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nreason:\n  %s\n", strings.ReplaceAll(d.Reason, "\n", "\n  "))
	switch {
	case len(d.Change) > 0:
		var b bytes.Buffer
		if json.Indent(&b, d.Change, "  ", "  ") != nil {
			b.Write(d.Change)
		}
		fmt.Fprintf(w, "\nchange:\n  %s\n", b.String())
	case d.Payload != "":
		fmt.Fprintf(w, "\npayload:\n  %q\n", d.Payload)
	}
	return nil
}

// renderAction shows the answer to a sync, a re-baseline or a
// Dump rebuild in one line.
func renderAction(w io.Writer, body []byte, _ time.Time) error {
	var (
		dumps admin.RebuildAnswer
		sync  admin.SyncAnswer
	)
	for _, v := range []any{&dumps, &sync} {
		if err := decodeAnswer(body, v); err != nil {
			return err
		}
	}
	switch {
	case dumps.Collection != "":
		fmt.Fprintf(w, "dumps of %s: %s%s%s\n", dumps.Collection, dumps.State, yesNo(dumps.Joined, " (joined a rebuild under way)", ""), errSuffix(dumps.Error))
	case sync.State != "":
		what := yesNo(sync.Rebaseline, "re-baseline", "sync")
		fmt.Fprintf(w, "%s of %s: %s%s%s\n", what, sync.Source, sync.State, yesNo(sync.Merged, " (merged with a pass already asked for)", ""), errSuffix(sync.Error))
	}
	return nil
}

// renderFixed shows the answer to a retry or a purge.
func renderFixed(verb string) func(io.Writer, []byte, time.Time) error {
	return func(w io.Writer, body []byte, _ time.Time) error {
		var fixed admin.Fixed
		if err := decodeAnswer(body, &fixed); err != nil {
			return err
		}
		n := fixed.Retried + fixed.Purged
		which := "every Source"
		switch {
		case fixed.Seq != 0:
			which = fmt.Sprintf("dead letter %d", fixed.Seq)
		case fixed.Source != "":
			which = "Source " + fixed.Source
		}
		_, err := fmt.Fprintf(w, "%s %s of %s\n", verb, countOf(int64(n), "dead letter"), which)
		return err
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// renderReload shows what a reload changed, one line per field of the
// answer, lists joined.
func renderReload(w io.Writer, body []byte, _ time.Time) error {
	var m map[string]any
	if err := decodeAnswer(body, &m); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	t := newTable(w)
	for _, k := range keys {
		v := m[k]
		var s string
		switch x := v.(type) {
		case nil:
			s = "none"
		case []any:
			parts := make([]string, len(x))
			for i, p := range x {
				parts[i] = fmt.Sprint(p)
			}
			s = yesNo(len(parts) > 0, strings.Join(parts, ", "), "none")
		default:
			s = fmt.Sprint(x)
		}
		fmt.Fprintf(t, "%s\t%s\n", strings.ReplaceAll(k, "_", " "), s)
	}
	return t.Flush()
}
