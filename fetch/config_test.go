package fetch

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestConfigDefaultsValidateAndLoad(t *testing.T) {
	d := Defaults()
	if err := d.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	cfg := Defaults()
	src := "workers: 3\nmax_blob_bytes: 1048576\nretry_base: 2s\nretry_max: 1m\nnot_found_attempts: 4\nin_progress_every: 5s\ndrain_timeout: 0s\n"
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	want := Config{Workers: 3, MaxBlobBytes: 1 << 20, RetryBase: 2 * time.Second, RetryMax: time.Minute, NotFoundAttempts: 4, InProgressEvery: 5 * time.Second,
		MaxParked: 2048, HostWait: 2 * time.Second, BusyRetry: 2 * time.Second}
	if cfg != want {
		t.Errorf("loaded %+v, want %+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("loaded config: %v", err)
	}
}

func TestConfigValidateNamesFields(t *testing.T) {
	bad := Config{Workers: 0, MaxBlobBytes: -1, RetryBase: 0, RetryMax: -1, NotFoundAttempts: 0, InProgressEvery: 0, DrainTimeout: -1}
	err := bad.Validate()
	if err == nil {
		t.Fatal("an all-wrong config passed")
	}
	for _, f := range []string{"workers", "max_blob_bytes", "retry_base", "retry_max", "not_found_attempts", "in_progress_every", "drain_timeout"} {
		if !strings.Contains(err.Error(), "fetch."+f+":") {
			t.Errorf("error does not name %s: %v", f, err)
		}
	}
}

func TestRetryDelayGrowsAndIsCapped(t *testing.T) {
	cfg := Config{RetryBase: time.Second, RetryMax: 20 * time.Second}
	for delivered, want := range map[uint64]time.Duration{1: time.Second, 2: 4 * time.Second, 3: 16 * time.Second, 4: 20 * time.Second, 40: 20 * time.Second} {
		if got := cfg.retryDelay(delivered); got != want {
			t.Errorf("delay after delivery %d: %s, want %s", delivered, got, want)
		}
	}
}
