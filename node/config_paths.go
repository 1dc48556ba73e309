package node

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// unknownFields walks the file's YAML beside the Config type and reports
// every key that names no field, by its path in the file
// (sources[1].schedul), with the known field it is closest to; and maps
// each line to the path of the value on it, for the decoder's own errors,
// and each path to its line, for the errors of validation.
func unknownFields(root *yaml.Node) (errs []ConfigError, lines map[int]string, paths map[string]int) {
	w := &yamlWalk{lines: map[int]string{}, paths: map[string]int{}}
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	w.walk(root, "", reflect.TypeOf(Config{}))
	return w.errs, w.lines, w.paths
}

type yamlWalk struct {
	errs  []ConfigError
	lines map[int]string
	paths map[string]int
}

func (w *yamlWalk) at(line int, path string) {
	w.lines[line] = path
	w.paths[path] = line
}

func (w *yamlWalk) walk(n *yaml.Node, path string, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			w.at(k.Line, p)
			ft, ok := fields[k.Value]
			if !ok {
				msg := "unknown field"
				if s := closest(k.Value, fields); s != "" {
					msg = "unknown field; did you mean " + s + "?"
				}
				w.errs = append(w.errs, ConfigError{Line: k.Line, Field: p, Msg: msg})
				continue
			}
			w.walk(v, p, ft)
		}
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			w.at(c.Line, p)
			w.walk(c, p, t.Elem())
		}
	}
}

// yamlFields are a struct's fields by YAML name, inline ones included.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// closest is the known name within two edits of s, if any.
func closest(s string, known map[string]reflect.Type) string {
	best, bestD := "", 3
	for k := range known {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

var (
	typeErrLine    = regexp.MustCompile(`^line (\d+): cannot unmarshal !!(\w+) (.*) into (\S+)$`)
	unknownErrLine = regexp.MustCompile(`^line \d+: field \S+ not found in type`)
)

// friendlyTypeError rewrites one of the decoder's type errors with the
// field's path and what was expected, without Go type names. ok is false
// for an unknown field, which unknownFields reports better.
func friendlyTypeError(msg string, lines map[int]string) (ConfigError, bool) {
	if unknownErrLine.MatchString(msg) {
		return ConfigError{}, false
	}
	m := typeErrLine.FindStringSubmatch(msg)
	if m == nil {
		return ConfigError{Msg: msg}, true
	}
	var line int
	fmt.Sscan(m[1], &line)
	want := map[string]string{"time.Duration": "a duration such as 30s or 5m", "bool": "true or false",
		"int": "a whole number", "int64": "a whole number", "uint64": "a whole number", "float64": "a number", "string": "a string"}[m[4]]
	if want == "" {
		want = "a value of another shape"
	}
	return ConfigError{Line: line, Field: lines[line], Msg: fmt.Sprintf("%s is not %s", m[3], want)}, true
}
