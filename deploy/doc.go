// Package deploy holds no code: it is the home of viaduct's deployment
// files (the container image, a compose cluster, Kubernetes manifests, a
// systemd unit, Prometheus alert rules and a Grafana dashboard) and of the
// tests that need viaduct itself: every viaduct configuration passes the
// checks of `viaduct serve --check`, names, ports and volumes agree
// between files, and every metric the rules and the dashboard name is one
// a running node exports. Whether the tools that read the files accept
// them is tested by deploy/check, a module of its own, with those tools'
// loaders. README.md says what each file is for.
package deploy
