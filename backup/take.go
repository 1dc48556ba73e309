package backup

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/viaduct-mirror/viaduct/catalog"
	"github.com/viaduct-mirror/viaduct/queue"
)

// Format is the version of the layout below; a restore refuses a
// backup of a format it does not know.
const Format = 1

// The files of a backup, unpacked: the manifest, the catalog, and one
// JetStream snapshot per stream (buckets are streams too).
const (
	ManifestFile = "manifest.json"
	CatalogFile  = "catalog.db"
	StreamsDir   = "streams"
)

// Manifest says what a backup holds and how to check it. It is
// written last, so a backup without one was cut short.
type Manifest struct {
	Format int `json:"format"`
	// Version is the viaduct that took the backup.
	Version string    `json:"viaduct_version"`
	Node    string    `json:"node"`
	Taken   time.Time `json:"taken"`
	// CatalogSchema is the copy's schema version: a build that knows
	// fewer versions cannot read it.
	CatalogSchema int `json:"catalog_schema_version"`
	// CatalogApplied is the last EVENTS sequence the copy had applied:
	// a node restored from it resumes at the next.
	CatalogApplied uint64 `json:"catalog_applied_seq"`
	// EventsLastSeq is EVENTS' last sequence in the backup, at least
	// CatalogApplied; 0 with an external NATS, whose streams are not in it.
	EventsLastSeq uint64 `json:"events_last_seq"`
	// Streams are the streams and buckets in the order they were taken,
	// none with an external NATS (the cluster's own backups keep those).
	Streams []queue.StreamSnapshot `json:"streams"`
	// Blobs is where the node's blobs were: they are not in the backup.
	Blobs string `json:"blobs"`
	// SHA256 is each file's digest, by its path in the backup.
	SHA256 map[string]string `json:"sha256"`
}

// streamFile is where a stream's snapshot is in a backup.
func streamFile(name string) string { return StreamsDir + "/" + name + ".snapshot" }

// Node is what a backup is taken of: the running node's catalog and
// queue, and what the manifest says of it.
type Node struct {
	Catalog *catalog.Catalog
	Queue   *queue.Queue
	// Embedded: the queue is the node's own NATS server, whose streams
	// go into the backup; an external cluster keeps its own backups.
	Embedded bool
	// Version is the viaduct taking the backup.
	Version string
	// Blobs says where the node's blobs are (they are not in a backup).
	Blobs string
}

// Server answers POST /admin/backup with a tar of a backup of the
// running node. The parts are taken first into a working directory in
// Spool (so an error is answered as one, before any byte of the tar),
// then sent; one backup runs at a time.
type Server struct {
	Node Node
	// Spool is the directory the working directories are made in: the
	// node's data directory, on the disk that has room for a catalog.
	Spool string
	Log   *slog.Logger
	mu    sync.Mutex
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.mu.TryLock() {
		http.Error(w, "a backup of this node is already running", http.StatusConflict)
		return
	}
	defer s.mu.Unlock()
	// One backup runs at a time: a working directory found now was left
	// by a process that stopped in the middle of one.
	if stale, _ := filepath.Glob(filepath.Join(s.Spool, ".backup-*")); len(stale) > 0 {
		for _, d := range stale {
			os.RemoveAll(d)
		}
		s.Log.Info("backup: removed the working directories of backups cut short", "dirs", len(stale))
	}
	spool, err := os.MkdirTemp(s.Spool, ".backup-")
	if err != nil {
		s.failed(w, fmt.Errorf("backup: making its working directory: %w", err))
		return
	}
	defer os.RemoveAll(spool)
	m, err := Take(r.Context(), s.Node, spool)
	if err != nil {
		s.failed(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-tar")
	if err := WriteTar(w, spool, m); err != nil {
		// The status is sent: the client finds no manifest at the end.
		s.Log.Error("backup not sent whole", "err", err)
		return
	}
	s.Log.Info("backup sent", "catalog_applied_seq", m.CatalogApplied, "events_last_seq", m.EventsLastSeq, "streams", len(m.Streams))
}

func (s *Server) failed(w http.ResponseWriter, err error) {
	s.Log.Error("backup failed", "err", err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// Take writes a backup's files into dir and returns its manifest:
// the catalog first, then every stream in the order BackupStreams gives,
// so that each part holds at least what the parts before it recorded.
func Take(ctx context.Context, n Node, dir string) (Manifest, error) {
	m := Manifest{Format: Format, Version: n.Version, Node: n.Queue.Config().NodeName,
		Taken: time.Now().UTC(), Blobs: n.Blobs, SHA256: map[string]string{}}
	info, err := n.Catalog.Backup(ctx, filepath.Join(dir, CatalogFile))
	if err != nil {
		return m, fmt.Errorf("backup: %w", err)
	}
	m.CatalogSchema, m.CatalogApplied = info.SchemaVersion, info.Applied
	if !n.Embedded {
		return m, nil
	}
	names, err := n.Queue.BackupStreams(ctx)
	if err != nil {
		return m, fmt.Errorf("backup: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, StreamsDir), 0o700); err != nil {
		return m, fmt.Errorf("backup: %w", err)
	}
	for _, name := range names {
		s, err := snapshotTo(ctx, n.Queue, name, filepath.Join(dir, streamFile(name)))
		if err != nil {
			return m, fmt.Errorf("backup: %w", err)
		}
		m.Streams = append(m.Streams, s)
		if name == queue.StreamEvents {
			var st struct {
				LastSeq uint64 `json:"last_seq"`
			}
			if err := json.Unmarshal(s.State, &st); err != nil {
				return m, fmt.Errorf("backup: reading EVENTS' state: %w", err)
			}
			m.EventsLastSeq = st.LastSeq
		}
	}
	if m.EventsLastSeq < m.CatalogApplied {
		return m, fmt.Errorf("backup: EVENTS ends at %d, before the catalog's %d: not a consistent copy", m.EventsLastSeq, m.CatalogApplied)
	}
	return m, nil
}

// snapshotTo writes one stream's snapshot to the file at path.
func snapshotTo(ctx context.Context, q *queue.Queue, name, path string) (queue.StreamSnapshot, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return queue.StreamSnapshot{}, err
	}
	s, err := q.SnapshotStream(ctx, name, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("snapshot of %s: %w", name, cerr)
	}
	return s, err
}

// WriteTar sends the files in dir, each with its digest recorded,
// and the manifest last.
func WriteTar(w io.Writer, dir string, m Manifest) error {
	tw := tar.NewWriter(w)
	files := []string{CatalogFile}
	for _, s := range m.Streams {
		files = append(files, streamFile(s.Stream))
	}
	for _, name := range files {
		sum, err := addFile(tw, dir, name)
		if err != nil {
			return err
		}
		m.SHA256[name] = sum
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ManifestFile, Mode: 0o600, Size: int64(len(b)), ModTime: m.Taken}); err != nil {
		return err
	}
	if _, err := tw.Write(b); err != nil {
		return err
	}
	return tw.Close()
}

// addFile writes one file of dir into the tar and returns its sha-256.
func addFile(tw *tar.Writer, dir, name string) (string, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: st.ModTime()}); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tw, h), f); err != nil {
		return "", fmt.Errorf("sending %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
