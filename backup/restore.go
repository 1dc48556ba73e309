package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
)

// ErrNotEmpty is returned by Restore when the configuration's data
// directory already holds a node: a restore never overwrites one.
var ErrNotEmpty = errors.New("not a new, empty data directory")

// Read reads the manifest of the backup unpacked in dir and checks
// every file against it, and that this build can read its catalog.
func Read(ctx context.Context, dir string) (Manifest, error) {
	where := "backup " + dir
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return Manifest{}, fmt.Errorf("%s: %w", where, errBackupIncomplete)
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", where, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: reading %s: %w", where, ManifestFile, err)
	}
	if m.Format != Format {
		return m, fmt.Errorf("%s: format %d, this build reads format %d", where, m.Format, Format)
	}
	for name, want := range m.SHA256 {
		got, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return m, fmt.Errorf("%s: %w", where, err)
		}
		if got != want {
			return m, fmt.Errorf("%s: %s has sha-256 %s, the manifest says %s: the copy is damaged", where, name, got, want)
		}
	}
	if m.SHA256[CatalogFile] == "" {
		return m, fmt.Errorf("%s: the manifest lists no %s", where, CatalogFile)
	}
	for _, s := range m.Streams {
		if m.SHA256[streamFile(s.Stream)] == "" {
			return m, fmt.Errorf("%s: the manifest lists no snapshot of stream %s", where, s.Stream)
		}
	}
	info, err := catalog.ReadBackupInfo(ctx, filepath.Join(dir, CatalogFile))
	if err != nil {
		return m, fmt.Errorf("%s: %w", where, err)
	}
	if info.SchemaVersion != m.CatalogSchema || info.Applied != m.CatalogApplied {
		return m, fmt.Errorf("%s: the catalog is at schema %d, sequence %d; the manifest says %d, %d", where, info.SchemaVersion, info.Applied, m.CatalogSchema, m.CatalogApplied)
	}
	if m.CatalogSchema > catalog.SchemaVersion() {
		return m, fmt.Errorf("%s: its catalog is at schema version %d, taken by viaduct %s; this build knows versions up to %d: restore it with viaduct %s or later",
			where, m.CatalogSchema, m.Version, catalog.SchemaVersion(), m.Version)
	}
	return m, nil
}

// Target is the node a backup is restored for: where its configuration
// (filled with its defaults) puts its data.
type Target struct {
	DataDir     string
	CatalogPath string
	Queue       queue.Config
	// BlobDir is the directory blob store, which may sit inside DataDir;
	// empty for S3.
	BlobDir string
}

// Restore puts the backup unpacked in dir in place for cfg, whose
// data directory must be new: missing or empty, but for the blob
// directory inside it, which an operator copies there first. The streams
// go back into the embedded server's store with JetStream's restore, the
// catalog file beside them; a node then started on cfg resumes where the
// backed-up node was. A restore that fails halfway says so: remove the
// data directory and run it again.
func Restore(ctx context.Context, cfg Target, dir string, log *slog.Logger) (Manifest, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := Read(ctx, dir)
	if err != nil {
		return m, err
	}
	if err := checkNewDataDir(cfg); err != nil {
		return m, err
	}
	if len(m.Streams) > 0 && !cfg.Queue.Embedded() {
		return m, fmt.Errorf("restore %s: the backup holds the embedded NATS server's streams, and queue.url names an external one: restore into a configuration with the embedded server", dir)
	}
	if len(m.Streams) == 0 && cfg.Queue.Embedded() {
		log.Warn("the backup holds no streams (it was taken from a node on an external NATS): the embedded server starts empty, and the catalog waits for EVENTS to reach its sequence", "catalog_applied_seq", m.CatalogApplied)
	}
	partial := func(err error) error {
		return fmt.Errorf("restore %s into %s: %w (the data directory holds a partial restore: remove it before trying again)", dir, cfg.DataDir, err)
	}
	if len(m.Streams) > 0 {
		open := func(s queue.StreamSnapshot) (io.ReadCloser, error) {
			return os.Open(filepath.Join(dir, filepath.FromSlash(streamFile(s.Stream))))
		}
		if err := os.MkdirAll(cfg.Queue.Dir, 0o700); err != nil {
			return m, partial(err)
		}
		if err := queue.RestoreStreams(ctx, cfg.Queue, log, m.Streams, open); err != nil {
			return m, partial(err)
		}
	}
	if err := copyFile(filepath.Join(dir, CatalogFile), cfg.CatalogPath); err != nil {
		return m, partial(err)
	}
	log.Info("backup restored", "from", dir, "data_dir", cfg.DataDir, "taken", m.Taken, "catalog_applied_seq", m.CatalogApplied, "events_last_seq", m.EventsLastSeq, "streams", len(m.Streams))
	return m, nil
}

// checkNewDataDir refuses a data directory, catalog or JetStream store
// that already holds anything (the blob directory apart).
func checkNewDataDir(cfg Target) error {
	entries, err := os.ReadDir(cfg.DataDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("restore: data_dir %s: %w", cfg.DataDir, err)
	}
	for _, e := range entries {
		p := filepath.Join(cfg.DataDir, e.Name())
		if cfg.BlobDir != "" && samePath(p, cfg.BlobDir) {
			continue
		}
		return fmt.Errorf("restore: data_dir %s holds %s: %w; restore into a new directory, or move this one aside first", cfg.DataDir, e.Name(), ErrNotEmpty)
	}
	if _, err := os.Lstat(cfg.CatalogPath); err == nil {
		return fmt.Errorf("restore: catalog.path %s exists: %w", cfg.CatalogPath, ErrNotEmpty)
	}
	if cfg.Queue.Embedded() {
		if q, err := os.ReadDir(cfg.Queue.Dir); err == nil && len(q) > 0 {
			return fmt.Errorf("restore: queue.dir %s holds %s: %w", cfg.Queue.Dir, q[0].Name(), ErrNotEmpty)
		}
	}
	return nil
}

// samePath reports whether a and b name the same place.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// copyFile copies src to dst, a new file, through a temporary name in
// dst's directory, synced before it takes its name.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	tmp := dst + ".restoring"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// fileSHA256 is the hex sha-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
