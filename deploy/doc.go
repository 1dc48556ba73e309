// Package deploy holds no code: it is the home of viaduct's deployment
// files (the container image, a compose cluster, Kubernetes manifests, a
// systemd unit, Prometheus alert rules and a Grafana dashboard) and of the
// tests that keep them true. Docker, Kubernetes and systemd are not
// available to the tests, so they check what can be checked without them:
// every file parses, every viaduct configuration passes the checks of
// `viaduct serve --check`, names, ports and volumes agree between files,
// and every metric the rules and the dashboard name is one a running node
// exports. README.md says what each file is for.
package deploy
