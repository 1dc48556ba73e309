package miniotest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds how long a server may take to answer its health check.
const startTimeout = 30 * time.Second

// Start runs a MinIO server for the rest of the test and returns its
// address (host:port, plain HTTP) and root credentials. The binary is taken
// from $VIADUCT_MINIO, else minio on $PATH, else $(go env GOPATH)/bin/minio.
// Without a binary the test is skipped, or fails when $CI is "true".
func Start(t testing.TB) (endpoint, accessKey, secretKey string) {
	t.Helper()
	bin := binaryOrSkip(t)
	p, err := launchRetry([]string{bin}, t.TempDir(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("stopping MinIO: %v", err)
		}
	})
	return p.addr, p.user, p.password
}

// binaryOrSkip finds the binary or ends the test: a skip on a developer's
// machine, a failure in CI where a skipped test would hide a gap.
func binaryOrSkip(t testing.TB) string {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("MinIO is needed and missing: %v (`make test-deps` installs it)", err)
		}
		t.Skipf("skipping: %v; `make test-deps` installs MinIO", err)
	}
	return bin
}

// Server is a MinIO server started by Launch, outside a test.
type Server struct {
	// Endpoint is its address (host:port, plain HTTP); AccessKey and
	// SecretKey its root credentials.
	Endpoint, AccessKey, SecretKey string
	p                              *process
}

// Launch starts a MinIO server as Start does, outside a test (the
// benchmark harness gives each measured run a fresh one): its data and
// certificates in dir, returning once it serves S3 requests. command is
// the binary (see Binary), possibly preceded by a wrapper that execs it,
// such as `taskset -c 1`.
func Launch(command []string, dir string) (*Server, error) {
	if len(command) == 0 {
		return nil, fmt.Errorf("starting MinIO: no command")
	}
	p, err := launchRetry(command, filepath.Join(dir, "data"), filepath.Join(dir, "certs"))
	if err != nil {
		return nil, err
	}
	return &Server{Endpoint: p.addr, AccessKey: p.user, SecretKey: p.password, p: p}, nil
}

// Stop stops the server (see process.stop); its data stays in dir.
func (s *Server) Stop() error { return s.p.stop() }

// launchRetry starts a server with fresh random credentials. A port found
// free can be taken before MinIO binds it, so a server that dies at
// start-up is tried again on fresh ports.
func launchRetry(command []string, data, certs string) (*process, error) {
	user, password := randomHex(8), randomHex(16)
	var errs []string
	for range 3 {
		p, err := launch(command, data, certs, user, password)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err.Error())
	}
	return nil, fmt.Errorf("starting MinIO (%s):\n%s", strings.Join(command, " "), strings.Join(errs, "\n"))
}

// Binary finds the MinIO server binary as Start does.
func Binary() (string, error) {
	if p := os.Getenv("VIADUCT_MINIO"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("VIADUCT_MINIO=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	out, err := exec.Command("go", "env", "GOPATH").Output()
	if err != nil {
		return "", fmt.Errorf("no minio on PATH, and `go env GOPATH` failed: %w", err)
	}
	gopath := strings.TrimSpace(string(out))
	if i := strings.IndexByte(gopath, os.PathListSeparator); i >= 0 {
		gopath = gopath[:i]
	}
	p := filepath.Join(gopath, "bin", "minio")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no minio on PATH nor at %s", p)
	}
	return p, nil
}

// process is one running MinIO server.
type process struct {
	addr           string
	user, password string
	cmd            *exec.Cmd
	out            *lockedBuffer
	exited         chan struct{} // closed once the process has been waited for
}

func launch(command []string, data, certs, user, password string) (*process, error) {
	addr, console, err := freePorts()
	if err != nil {
		return nil, err
	}
	args := append(command[1:len(command):len(command)], "server", data,
		"--address", addr, "--console-address", console, "--certs-dir", certs)
	cmd := exec.Command(command[0], args...)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+user,
		"MINIO_ROOT_PASSWORD="+password,
		"MINIO_UPDATE=off",
		"MINIO_BROWSER=off",
	)
	p := &process{addr: addr, user: user, password: password, cmd: cmd, out: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitLive(); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w; output:\n%s", err, p.out.String())
	}
	return p, nil
}

// waitLive polls the liveness endpoint, then the cluster one, until each
// answers 200, the process exits, or the start-up deadline passes. The
// server is live before it can serve S3 requests (they fail with "Server not
// initialized yet"); the cluster check passes once its object layer, bucket
// metadata and users are loaded.
func (p *process) waitLive() error {
	deadline := time.Now().Add(startTimeout)
	for _, path := range []string{"/minio/health/live", "/minio/health/cluster"} {
		if err := p.poll("http://"+p.addr+path, deadline); err != nil {
			return err
		}
	}
	return nil
}

func (p *process) poll(url string, deadline time.Time) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within %v (last error: %v)", url, startTimeout, err)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("minio exited at start-up: %v", p.cmd.ProcessState)
		case <-tick.C:
		}
	}
}

// stop asks the server to exit (SIGTERM to its PID), and kills it if it has
// not within ten seconds.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("killing pid %d: %w", p.cmd.Process.Pid, err)
	}
	<-p.exited
	return nil
}

// freePorts returns two distinct 127.0.0.1 addresses nothing listens on.
func freePorts() (string, string, error) {
	var addrs [2]string
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", "", fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs[0], addrs[1], nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// lockedBuffer collects the server's output for error messages; the
// process writes it from its own goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
