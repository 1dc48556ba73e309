package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// viaduct migrate applies the configuration's settings to a cluster's
// existing streams, which a starting node only logs.
func TestMigrateAppliesSettings(t *testing.T) {
	srv := queuetest.Start(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "viaduct.yaml")
	conf := "data_dir: " + filepath.Join(dir, "data") + "\n" +
		"queue:\n  url: " + srv.ClientURL() + "\n  duplicate_window: 3m\n" +
		"blobs:\n  kind: dir\n  shared: true\n" +
		"sources:\n  - name: s\n    url: https://example.org/\n"
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := Run(context.Background(), []string{"migrate", "--config", file}, &out, &errs); code != 0 {
		t.Fatalf("migrate exited %d: %s", code, errs.String())
	}
	s, err := srv.JetStream().Stream(context.Background(), queue.StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Duplicates; got != 3*time.Minute {
		t.Fatalf("EVENTS' duplicate window after migrate: %s, want 3m", got)
	}
}
