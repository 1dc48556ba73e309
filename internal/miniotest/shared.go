package miniotest

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Shared is one MinIO server for every test of a package that asks for it,
// started by the first and stopped by Close, which the package's TestMain
// calls after m.Run. Tests sharing it keep apart by using their own
// buckets.
//
//	var minio miniotest.Shared
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		minio.Close()
//		os.Exit(code)
//	}
type Shared struct {
	once sync.Once
	p    *process
	dir  string
	err  error
}

// Start returns the shared server's address and root credentials, starting
// it on first use. A missing binary skips or fails the test as Start does.
func (s *Shared) Start(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	bin := binaryOrSkip(t)
	s.once.Do(func() {
		s.dir, s.err = os.MkdirTemp("", "miniotest-")
		if s.err != nil {
			return
		}
		data, certs := filepath.Join(s.dir, "data"), filepath.Join(s.dir, "certs")
		s.p, s.err = launchRetry([]string{bin}, data, certs)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.p.addr, s.p.user, s.p.password
}

// Close stops the server, if one was started, and removes its data.
func (s *Shared) Close() error {
	var errs []error
	if s.p != nil {
		errs = append(errs, s.p.stop())
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}
