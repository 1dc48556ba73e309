package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// runResync runs `resync-sync --baseline` from a fresh working directory
// (it writes its status file there) into a fresh destination.
func runResync(ctx context.Context, o options, dir string, r *result) error {
	if o.Resync == "" {
		return fmt.Errorf("-resync names no directory")
	}
	dest := filepath.Join(dir, "dest")
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", filepath.Join(o.Resync, "resync-sync"), "--baseline", o.SourceURL, dest)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+o.Resync)
	if _, err := timed(cmd, r); err != nil {
		return err
	}
	r.Stored = countFiles(dest)
	if r.Stored != int64(o.N) {
		return fmt.Errorf("resync stored %d of %d resources", r.Stored, o.N)
	}
	return nil
}

// runCopy copies the Source's bitstreams with cp and syncs the file
// system: the floor a mirror writing to the same disk is measured by.
func runCopy(ctx context.Context, o options, dir string, r *result) error {
	if o.SourceDir == "" {
		return fmt.Errorf("-source-dir names no directory")
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "cp", "-r", filepath.Join(o.SourceDir, "files"), filepath.Join(dir, "files"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	if err := exec.CommandContext(ctx, "sync").Run(); err != nil {
		return err
	}
	r.Seconds = since(start)
	r.PeakKB = maxRSS(cmd.ProcessState)
	r.CPU, r.SysCPU = cpuTime(cmd.ProcessState)
	r.Stored = countFiles(filepath.Join(dir, "files"))
	return nil
}

// runGet runs bench/httpget into dir/files: every bitstream GET from the
// Source into a file of its own, hashed and checked if verify is set, and
// a sync.
func runGet(ctx context.Context, o options, dir string, verify bool, r *result) error {
	if o.SourceDir == "" {
		return fmt.Errorf("-source-dir names no directory")
	}
	cmd := exec.CommandContext(ctx, o.HTTPGet, "-dir", o.SourceDir, "-out", filepath.Join(dir, "files"), "-verify="+strconv.FormatBool(verify))
	if _, err := timed(cmd, r); err != nil {
		return err
	}
	r.Stored = countFiles(filepath.Join(dir, "files"))
	if r.Stored != int64(o.N) {
		return fmt.Errorf("httpget stored %d of %d resources", r.Stored, o.N)
	}
	return nil
}

// runS3Put runs bench/s3put: one PUT per bitstream into a fresh bucket,
// each body unsigned with its Content-MD5 if unsigned is set.
func runS3Put(ctx context.Context, o options, round int, unsigned bool, r *result) error {
	bucket := "put-"
	if unsigned {
		bucket = "put-unsigned-"
	}
	cmd := exec.CommandContext(ctx, o.S3Put, "-endpoint", o.S3Endpoint, "-dir", filepath.Join(o.SourceDir, "files"),
		"-bucket", bucket+roundLabel(round)+"-"+strconv.FormatInt(time.Now().Unix(), 10), "-unsigned="+strconv.FormatBool(unsigned))
	cmd.Env = append(os.Environ(), "BENCH_S3_KEY="+o.S3Key, "BENCH_S3_SECRET="+o.S3Secret)
	out, err := timed(cmd, r)
	if err != nil {
		return err
	}
	r.Stored, _ = strconv.ParseInt(string(lastLines(out, 1)), 10, 64)
	return nil
}

// timed runs cmd and records its time from start to exit, its peak
// memory and its CPU time in r; the error carries the end of its output.
func timed(cmd *exec.Cmd, r *result) ([]byte, error) {
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, lastLines(out, 5))
	}
	r.Seconds = since(start)
	r.PeakKB = maxRSS(cmd.ProcessState)
	r.CPU, r.SysCPU = cpuTime(cmd.ProcessState)
	return out, nil
}

// cpuTime is a finished process's user and system time, and the system
// time alone, in seconds.
func cpuTime(ps *os.ProcessState) (total, sys float64) {
	return (ps.UserTime() + ps.SystemTime()).Seconds(), ps.SystemTime().Seconds()
}

func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}

func countFiles(root string) int64 {
	var n int64
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// lastLines is the end of a command's output, for an error message.
func lastLines(out []byte, n int) []byte {
	end := len(out)
	for end > 0 && (out[end-1] == '\n' || out[end-1] == ' ') {
		end--
	}
	i := end
	for ; i > 0 && n > 0; i-- {
		if out[i-1] == '\n' {
			n--
			if n == 0 {
				break
			}
		}
	}
	return out[i:end]
}
