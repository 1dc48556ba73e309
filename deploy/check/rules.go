package check

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// RulesGlob are the alert rule files of deploy/prometheus.
const RulesGlob = "prometheus/*.yaml"

// promql parses PromQL as a Prometheus server with default flags does.
var promql = parser.NewParser(parser.Options{})

// Rules reads a rule file as Prometheus and promtool do: unknown fields
// refused, every expression parsed, every label, annotation template and
// duration checked.
func Rules(file string) (*rulefmt.RuleGroups, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	groups, errs := rulefmt.ParseFile(file, false, model.UTF8Validation, promql, log)
	if len(errs) > 0 {
		return nil, fmt.Errorf("reading rules with Prometheus's parser: %w", errors.Join(errs...))
	}
	return groups, nil
}

// PromQL parses one expression.
func PromQL(expr string) (parser.Expr, error) {
	e, err := promql.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("parsing PromQL %q: %w", expr, err)
	}
	return e, nil
}

// grafanaVar is a Grafana variable in a query: $name, ${name} or
// ${name:format}.
var grafanaVar = regexp.MustCompile(`\$(\w+)|\$\{(\w+)(?::\w+)?\}`)

// grafanaRanges are the variables Grafana replaces with a duration.
var grafanaRanges = map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}

// GrafanaPromQL parses a dashboard's query as the PromQL Grafana sends:
// its variables replaced by a value of their kind (a duration for
// $__rate_interval and the like, a name for the others, which the
// dashboard uses inside label matchers).
func GrafanaPromQL(expr string) (parser.Expr, error) {
	sent := grafanaVar.ReplaceAllStringFunc(expr, func(v string) string {
		m := grafanaVar.FindStringSubmatch(v)
		if grafanaRanges[m[1]+m[2]] {
			return "5m"
		}
		return "x"
	})
	return PromQL(sent)
}
