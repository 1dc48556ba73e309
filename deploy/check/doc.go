// Package check reads viaduct's deployment files (deploy/) with the
// loaders of the tools that read them in production: compose's own
// loader for the compose file, Prometheus's rule and PromQL parsers for
// the alert rules and the dashboard's queries, strict decoding into the
// Kubernetes API types for the manifests, and systemd-analyze for the
// unit. A file that passes here is one those tools accept, not merely a
// file that parses as YAML.
//
// It is a Go module of its own so that these loaders, and everything
// they bring with them, stay out of viaduct's own go.mod. What needs
// viaduct itself (its configuration checks, the metrics a running node
// exports) is tested by package deploy in the main module. `make test`
// runs both.
package check
