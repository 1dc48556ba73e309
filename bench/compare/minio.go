package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// startMinIO starts a MinIO server on an empty data directory under dir,
// listening on o.S3Endpoint, and returns once it answers its liveness
// check. Every S3 run gets a server of its own: one server kept for the
// whole run would hold the objects of every run before, and each
// contender's rate would depend on its place in the order.
func startMinIO(ctx context.Context, o options, dir string) (stop func() error, err error) {
	args := strings.Fields(o.MinIO)
	if len(args) == 0 {
		return nil, errors.New("-minio names no command")
	}
	data := filepath.Join(dir, "minio")
	if err := os.Mkdir(data, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "minio.log"))
	if err != nil {
		return nil, err
	}
	args = append(args, "server", "--quiet", "--address", o.S3Endpoint, "--console-address", o.MinIOConsole, data)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+o.S3Key, "MINIO_ROOT_PASSWORD="+o.S3Secret)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		return log.Close()
	}
	live := "http://" + o.S3Endpoint + "/minio/health/live"
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-exited:
			log.Close()
			return nil, fmt.Errorf("MinIO exited: %v (see %s)", err, log.Name())
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if resp, err := http.Get(live); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return stop, nil
			}
		}
	}
	stop()
	return nil, fmt.Errorf("MinIO did not answer on %s within a minute (see %s)", live, log.Name())
}
