package node

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigError is one mistake in a configuration file: the line it is on
// and the field, by its path in the file (sources[2].url), so that an
// operator goes straight to it.
type ConfigError struct {
	// Line is 0 when the mistake is on no one line: a required field left
	// out, two sections that disagree.
	Line int
	// Field is the path of the field at fault, empty for a file that is
	// not YAML.
	Field string
	Msg   string
}

func (e ConfigError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ConfigErrors are every mistake found in one file, in the order of the
// file's lines: Load reports them all at once, so that one run of
// `viaduct serve --check` lists what there is to fix.
type ConfigErrors struct {
	File string
	Errs []ConfigError
}

// Error writes one mistake a line, each as file:line: field: message.
func (e *ConfigErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "config %s: ", e.File)
	if len(e.Errs) > 1 {
		fmt.Fprintf(&b, "%d errors:\n", len(e.Errs))
	}
	for i, c := range e.Errs {
		if i > 0 {
			b.WriteByte('\n')
		}
		if len(e.Errs) > 1 {
			b.WriteString(e.File)
			if c.Line > 0 {
				fmt.Fprintf(&b, ":%d", c.Line)
			}
			b.WriteString(": ")
			c.Line = 0
		}
		b.WriteString(c.Error())
	}
	return b.String()
}

// Unwrap gives each mistake, for errors.As.
func (e *ConfigErrors) Unwrap() []error {
	out := make([]error, len(e.Errs))
	for i, c := range e.Errs {
		out[i] = c
	}
	return out
}

// yamlErrLine is the line the YAML parser puts before its message.
var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntaxError reports a file the YAML parser refused, on the line at
// fault. The parser names the line where the enclosing block starts (a
// mis-indented key on line 4 of a list begun on line 2 is said to be on
// line 2); the line at fault is the last of the shortest run of first
// lines that fails the same way.
func syntaxError(b []byte, err error) ConfigError {
	m := yamlErrLine.FindStringSubmatch(err.Error())
	if m == nil {
		return ConfigError{Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var block int
	fmt.Sscan(m[1], &block)
	lines := bytes.SplitAfter(b, []byte("\n"))
	for n := block; n <= len(lines); n++ {
		var v yaml.Node
		perr := yaml.Unmarshal(bytes.Join(lines[:n], nil), &v)
		if pm := yamlErrLine.FindStringSubmatch(fmt.Sprint(perr)); pm != nil && pm[2] == m[2] {
			if n == block {
				return ConfigError{Line: n, Msg: m[2]}
			}
			return ConfigError{Line: n, Msg: fmt.Sprintf("%s (in the block that starts on line %d)", m[2], block)}
		}
	}
	return ConfigError{Line: block, Msg: m[2]}
}

// fieldPath splits a validation message into the path of the field it
// names and the rest: "harvest: schedule: bad" is harvest.schedule, "bad".
func fieldPath(msg string) (string, string) {
	var path []string
	for {
		head, rest, ok := strings.Cut(msg, ": ")
		if !ok || !fieldName.MatchString(head) {
			return strings.Join(path, "."), msg
		}
		path, msg = append(path, head), rest
	}
}

var fieldName = regexp.MustCompile(`^[a-z][a-z0-9_]*(\[\d+\])*(\.[a-z][a-z0-9_]*(\[\d+\])*)*$`)

// located turns the errors of Validate into ConfigErrors on the lines of
// the fields they name; a field not in the file is looked for by its
// closest parent that is.
func located(err error, paths map[string]int) []ConfigError {
	var out []ConfigError
	for _, leaf := range leaves(err) {
		for _, msg := range strings.Split(leaf.Error(), "\n") {
			field, rest := fieldPath(msg)
			line := 0
			for p := field; p != "" && line == 0; p = parentPath(p) {
				line = paths[p]
			}
			out = append(out, ConfigError{Line: line, Field: field, Msg: rest})
		}
	}
	return out
}

func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i > 0 {
		return p[:i]
	}
	return ""
}

// leaves are the errors errors.Join put together, however nested.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}
