package miniotest

import (
	"net/http"
	"testing"
)

func TestStart(t *testing.T) {
	endpoint, user, password := Start(t)
	if user == "" || len(password) < 8 {
		t.Errorf("credentials %q/%q: want a user and a password of 8 characters or more", user, password)
	}
	resp, err := http.Get("http://" + endpoint + "/minio/health/ready")
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("ready check: %s", resp.Status)
	}
	// An anonymous request to the S3 API is refused: the server runs with
	// the credentials given, not defaults.
	resp, err = http.Get("http://" + endpoint + "/")
	if err != nil {
		t.Fatalf("anonymous request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous ListBuckets: %s, want 403 Forbidden", resp.Status)
	}
}

func TestShared(t *testing.T) {
	var s Shared
	e1, u1, p1 := s.Start(t)
	e2, u2, p2 := s.Start(t)
	if e1 != e2 || u1 != u2 || p1 != p2 {
		t.Errorf("second Start gave another server: %s and %s", e1, e2)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := http.Get("http://" + e1 + "/minio/health/live"); err == nil {
		t.Errorf("server at %s still answers after Close", e1)
	}
}
