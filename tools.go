//go:build tools

// This file pins the modules the project is built on, so that they stay in
// go.mod while the packages that use them are written.
package viaduct

import (
	_ "github.com/mattn/go-sqlite3"
	_ "github.com/minio/minio-go/v7"
	_ "github.com/nats-io/nats-server/v2/server"
	_ "github.com/nats-io/nats.go"
	_ "github.com/nats-io/nats.go/jetstream"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/robfig/cron/v3"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "golang.org/x/time/rate"
	_ "go.yaml.in/yaml/v3"
)
