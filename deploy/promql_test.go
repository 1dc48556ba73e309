package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// selector is a metric an expression reads, with the label names its
// matchers use.
type selector struct {
	metric string
	labels []string
}

// exprNames is what an expression names: the metrics it reads and the
// labels it groups or matches on (by, without, on, ignoring, group_left,
// group_right).
type exprNames struct {
	selectors []selector
	grouping  []string
}

// PromQL words that are not metric names where an identifier may stand.
var (
	promKeywords = map[string]bool{
		"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
		"inf": true, "nan": true,
	}
	// promGrouping are followed by a parenthesised list of label names.
	promGrouping = map[string]bool{
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	}
	promAggregators = map[string]bool{
		"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
		"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
		"limitk": true, "limit_ratio": true,
	}
)

// promNames reads the metric and label names of a PromQL expression, as
// Prometheus's lexer would: strings, numbers and durations, range and
// subquery brackets, and Grafana's $variables are skipped; an identifier
// followed by "(" is a function; label names are read inside {…} and the
// lists after by, without, on, ignoring, group_left and group_right.
// Metrics named only by {__name__=…} are refused, since their names
// cannot be checked.
func promNames(expr string) (exprNames, error) {
	var out exprNames
	s := expr
	i := 0
	peek := func() byte { // the next byte that is not a space
		for j := i; j < len(s); j++ {
			if !isSpace(s[j]) {
				return s[j]
			}
		}
		return 0
	}
	for i < len(s) {
		c := s[i]
		switch {
		case isSpace(c):
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j, err := skipString(s, i)
			if err != nil {
				return out, err
			}
			i = j
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return out, fmt.Errorf("unclosed [ at %d", i)
			}
			i += j + 1
		case c == '$':
			i++
			if i < len(s) && s[i] == '{' {
				j := strings.IndexByte(s[i:], '}')
				if j < 0 {
					return out, fmt.Errorf("unclosed ${ at %d", i)
				}
				i += j + 1
			} else {
				for i < len(s) && isIdent(s[i], false) {
					i++
				}
			}
		case c == '{':
			return out, fmt.Errorf("matchers at %d follow no metric name", i)
		case c >= '0' && c <= '9' || c == '.':
			for i < len(s) && (isIdent(s[i], false) || s[i] == '.') {
				i++
			}
		case isIdent(c, true):
			j := i
			for j < len(s) && isIdent(s[j], false) {
				j++
			}
			word := s[i:j]
			i = j
			lw := strings.ToLower(word)
			switch {
			case promGrouping[lw]:
				if peek() == '(' {
					labels, j, err := labelList(s, strings.IndexByte(s[i:], '(')+i)
					if err != nil {
						return out, err
					}
					out.grouping = append(out.grouping, labels...)
					i = j
				}
			case promKeywords[lw], promAggregators[lw]:
			case peek() == '(':
				// a function
			default:
				sel := selector{metric: word, labels: []string{}}
				if peek() == '{' {
					labels, j, err := matcherLabels(s, strings.IndexByte(s[i:], '{')+i)
					if err != nil {
						return out, err
					}
					sel.labels, i = labels, j
				}
				out.selectors = append(out.selectors, sel)
			}
		default:
			i++
		}
	}
	return out, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdent(c byte, first bool) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
}

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unclosed string at %d", i)
}

// matcherLabels reads the label names of the matchers {…} starting at
// i (label, operator, string, separated by commas) and returns the index
// after the closing brace.
func matcherLabels(s string, i int) ([]string, int, error) {
	labels := []string{}
	i++
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	for {
		skip()
		if i < len(s) && s[i] == '}' {
			return labels, i + 1, nil
		}
		j := i
		for j < len(s) && isIdent(s[j], j == i) {
			j++
		}
		if j == i {
			return nil, 0, fmt.Errorf("matchers at %d: want a label name", i)
		}
		if s[i:j] == "__name__" {
			return nil, 0, fmt.Errorf("a metric named by __name__ at %d cannot be checked", i)
		}
		labels = append(labels, s[i:j])
		i = j
		skip()
		op := ""
		for _, o := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(s[i:], o) {
				op = o
				break
			}
		}
		if op == "" {
			return nil, 0, fmt.Errorf("matchers at %d: want =, !=, =~ or !~", i)
		}
		i += len(op)
		skip()
		if i >= len(s) || !strings.ContainsRune("\"'`", rune(s[i])) {
			return nil, 0, fmt.Errorf("matchers at %d: want a string", i)
		}
		var err error
		if i, err = skipString(s, i); err != nil {
			return nil, 0, err
		}
		skip()
		if i < len(s) && s[i] == ',' {
			i++
		} else if i >= len(s) || s[i] != '}' {
			return nil, 0, fmt.Errorf("matchers at %d: want , or }", i)
		}
	}
}

// labelList reads a parenthesised list of label names starting at i.
func labelList(s string, i int) ([]string, int, error) {
	j := strings.IndexByte(s[i:], ')')
	if j < 0 {
		return nil, 0, fmt.Errorf("unclosed ( at %d", i)
	}
	var labels []string
	for _, l := range strings.Split(s[i+1:i+j], ",") {
		if l = strings.TrimSpace(l); l != "" {
			labels = append(labels, l)
		}
	}
	return labels, i + j + 1, nil
}

func TestPromNames(t *testing.T) {
	for _, c := range []struct {
		expr      string
		selectors []selector
		grouping  []string
	}{
		{`up{job="viaduct"} == 0`, []selector{{"up", []string{"job"}}}, nil},
		{`sum by (source) (increase(viaduct_harvester_passes_total{result="error"}[30m])) > 0
		  unless sum by (source) (increase(viaduct_harvester_passes_total{result="ok"}[30m])) > 0`,
			[]selector{{"viaduct_harvester_passes_total", []string{"result"}}, {"viaduct_harvester_passes_total", []string{"result"}}}, []string{"source", "source"}},
		{`histogram_quantile(0.95, sum by (le) (rate(x_bucket{instance=~"$instance"}[$__rate_interval])))`,
			[]selector{{"x_bucket", []string{"instance"}}}, []string{"le"}},
		{`sum(rate(a[5m])) by (host, code) / on(instance) group_left(source) b offset 1h`,
			[]selector{{"a", []string{}}, {"b", []string{}}}, []string{"host", "code", "instance", "source"}},
		{`up{job="viaduct"} == 1 unless on (job, instance) viaduct_catalog_lag_events`,
			[]selector{{"up", []string{"job"}}, {"viaduct_catalog_lag_events", []string{}}}, []string{"job", "instance"}},
		{`label_replace(m{a="x}y", b!~'q\'r'}, "dst", "$1", "src", "(.*)") > bool 1e3`,
			[]selector{{"m", []string{"a", "b"}}}, nil},
		{`topk(5, max without (pod) (m2)) and time() - m3 > 3 * 3600 @ start()`,
			[]selector{{"m2", []string{}}, {"m3", []string{}}}, []string{"pod"}},
		{`max_over_time(deriv(g[1h:5m])[2h:]) > Inf`, []selector{{"g", []string{}}}, nil},
		{`sum(x{source=~"${source}"}) # a comment naming not_a_metric`, []selector{{"x", []string{"source"}}}, nil},
	} {
		got, err := promNames(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if !slices.EqualFunc(got.selectors, c.selectors, func(a, b selector) bool {
			return a.metric == b.metric && slices.Equal(a.labels, b.labels)
		}) || !slices.Equal(got.grouping, c.grouping) {
			t.Errorf("%s:\n got %v %q\nwant %v %q", c.expr, got.selectors, got.grouping, c.selectors, c.grouping)
		}
	}
	for _, bad := range []string{`{__name__=~"viaduct_.*"}`, `{job="x"}`, `rate(x[5m)`, `x{a="b}`, `sum(x{a=b c})`} {
		if _, err := promNames(bad); err == nil {
			t.Errorf("%s: read without an error", bad)
		}
	}
}
