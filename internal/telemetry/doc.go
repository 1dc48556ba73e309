// Package telemetry sets up the process's tracing: the OpenTelemetry
// tracer provider and its exporter, from the configuration file and the
// standard OTEL_* environment variables, and the server span of each
// request to the public listener. It belongs to the command and to the
// node's assembly; the roles make their spans through the provider they
// are given and never configure tracing themselves.
package telemetry
