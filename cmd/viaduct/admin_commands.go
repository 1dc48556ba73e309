package main

import (
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"
)

// adminCall is one admin command as a request to the API and the way its
// answer is shown to people.
type adminCall struct {
	method, path string
	render       func(w io.Writer, body []byte, now time.Time) error
}

// adminSpec describes one admin command: its arguments, its flags and
// the request they make.
type adminSpec struct {
	usage string // after "viaduct admin "
	// flags are those the command takes besides -o: wait, source, all.
	flags []string
	// build maps the positional arguments and flags to the call; it
	// returns a message for a call that says too little or too much.
	build func(pos []string, f adminFlags) (adminCall, string)
}

// adminFlags are the command flags, as given.
type adminFlags struct {
	wait, all bool
	source    string
}

var adminSpecs = map[string]adminSpec{
	"status": {usage: "status", build: func(pos []string, f adminFlags) (adminCall, string) {
		return adminCall{"GET", "/admin/status", renderStatus}, none(pos)
	}},
	"sources": {usage: "sources [NAME]", build: func(pos []string, f adminFlags) (adminCall, string) {
		switch len(pos) {
		case 0:
			return adminCall{"GET", "/admin/sources", renderSources}, ""
		case 1:
			return adminCall{"GET", "/admin/sources/" + url.PathEscape(pos[0]), renderSource}, ""
		}
		return adminCall{}, fmt.Sprintf("unexpected argument %q: one Source at a time", pos[1])
	}},
	"sync":       syncSpec("sync"),
	"rebaseline": syncSpec("rebaseline"),
	"deadletters": {usage: "deadletters [--source NAME]", flags: []string{"source"}, build: func(pos []string, f adminFlags) (adminCall, string) {
		return adminCall{"GET", withQuery("/admin/deadletters", "source", f.source), renderDeadLetters}, none(pos)
	}},
	"deadletter": {usage: "deadletter SEQ", build: func(pos []string, f adminFlags) (adminCall, string) {
		seq, msg := oneSeq(pos)
		return adminCall{"GET", "/admin/deadletters/" + seq, renderDeadLetter}, msg
	}},
	"retry": bulkSpec("retry"),
	"purge": bulkSpec("purge"),
	"dumps": {usage: "dumps COLLECTION [--wait]", flags: []string{"wait"}, build: func(pos []string, f adminFlags) (adminCall, string) {
		coll, msg := one(pos, "a collection")
		return adminCall{"POST", withQuery("/admin/dumps/"+url.PathEscape(coll), "wait", f.waitQ()), renderAction}, msg
	}},
	"reload": {usage: "reload", build: func(pos []string, f adminFlags) (adminCall, string) {
		return adminCall{"POST", "/admin/reload", renderReload}, none(pos)
	}},
}

// "source" is the old name of "sources NAME", kept for scripts.
func init() {
	adminSpecs["source"] = adminSpec{usage: "source NAME", build: adminSpecs["sources"].build}
}

func syncSpec(cmd string) adminSpec {
	return adminSpec{usage: cmd + " NAME [--wait]", flags: []string{"wait"}, build: func(pos []string, f adminFlags) (adminCall, string) {
		name, msg := one(pos, "a Source's name")
		return adminCall{"POST", withQuery("/admin/sources/"+url.PathEscape(name)+"/"+cmd, "wait", f.waitQ()), renderAction}, msg
	}}
}

// bulkSpec is retry or purge: one dead letter, a Source's or all of
// them, said explicitly, so that a forgotten argument never empties the
// whole stream.
func bulkSpec(cmd string) adminSpec {
	render := renderFixed(map[string]string{"retry": "retried", "purge": "purged"}[cmd])
	return adminSpec{usage: cmd + " SEQ | --source NAME | --all", flags: []string{"source", "all"}, build: func(pos []string, f adminFlags) (adminCall, string) {
		ways := len(pos)
		if f.source != "" {
			ways++
		}
		if f.all {
			ways++
		}
		if ways != 1 || len(pos) > 1 {
			return adminCall{}, "say which dead letters: SEQ, --source NAME or --all"
		}
		if len(pos) == 0 {
			q := url.Values{}
			if f.all {
				q.Set("all", "true")
			} else {
				q.Set("source", f.source)
			}
			return adminCall{"POST", "/admin/deadletters/" + cmd + "?" + q.Encode(), render}, ""
		}
		seq, msg := oneSeq(pos)
		if cmd == "purge" {
			return adminCall{"DELETE", "/admin/deadletters/" + seq, render}, msg
		}
		return adminCall{"POST", "/admin/deadletters/" + seq + "/retry", render}, msg
	}}
}

// parseAdminCommand reads the command, its arguments and its flags,
// which may come before or after the arguments; -o may be given here
// too. Anything the command does not take is refused with its usage.
func parseAdminCommand(args []string, out *string) (adminCall, error) {
	name := args[0]
	spec, ok := adminSpecs[name]
	if !ok {
		return adminCall{}, usageErrorf("unknown command %q (viaduct admin --help)", name)
	}
	var f adminFlags
	fs := flag.NewFlagSet("viaduct admin "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(out, "o", *out, "output format")
	for _, fl := range spec.flags {
		switch fl {
		case "wait":
			fs.BoolVar(&f.wait, "wait", false, "wait for the result")
		case "all":
			fs.BoolVar(&f.all, "all", false, "every dead letter")
		case "source":
			fs.StringVar(&f.source, "source", "", "the dead letters of this Source")
		}
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return adminCall{}, usageErrorf("%s: %v\nusage: viaduct admin %s", name, err, spec.usage)
	}
	call, msg := spec.build(pos, f)
	if msg != "" {
		return adminCall{}, usageErrorf("%s: %s\nusage: viaduct admin %s", name, msg, spec.usage)
	}
	return call, nil
}

// parseInterspersed parses fs from args, letting flags follow positional
// arguments ("sync alpha --wait"), and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func none(pos []string) string {
	if len(pos) > 0 {
		return fmt.Sprintf("unexpected argument %q", pos[0])
	}
	return ""
}

func one(pos []string, what string) (string, string) {
	switch len(pos) {
	case 0:
		return "", what + " is required"
	case 1:
		return pos[0], ""
	}
	return "", fmt.Sprintf("unexpected argument %q: %s only", pos[1], what)
}

func oneSeq(pos []string) (string, string) {
	v, msg := one(pos, "a dead letter's sequence number")
	if msg != "" {
		return "", msg
	}
	if n, err := strconv.ParseUint(v, 10, 64); err != nil || n == 0 {
		return "", fmt.Sprintf("%q is not a dead letter's sequence number", v)
	}
	return v, ""
}

func (f adminFlags) waitQ() string {
	if f.wait {
		return "true"
	}
	return ""
}

func withQuery(path, key, value string) string {
	if value == "" {
		return path
	}
	return path + "?" + url.Values{key: {value}}.Encode()
}
