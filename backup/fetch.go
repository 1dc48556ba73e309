package backup

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Fetch asks the node whose admin listener is at adminURL for a
// backup (POST /admin/backup, with token when not empty) and unpacks it
// into dir, which must not exist or be empty. Each file is checked
// against the digest the manifest gives; a backup that is not whole
// leaves no manifest, so that no restore takes it, and is removed.
func Fetch(ctx context.Context, adminURL, token, dir string) (Manifest, error) {
	where := "backup from " + adminURL
	if err := emptyDir(dir); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", where, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(adminURL, "/")+"/admin/backup", nil)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", where, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return Manifest{}, fmt.Errorf("%s: the node answered %s: %s", where, resp.Status, strings.TrimSpace(string(b)))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", where, err)
	}
	m, err := unpackBackup(resp.Body, dir)
	if err != nil {
		clearDir(dir)
		return Manifest{}, fmt.Errorf("%s: %w", where, err)
	}
	return m, nil
}

// unpackBackup writes the tar's files into dir, the manifest last once
// every file's digest matches it.
func unpackBackup(r io.Reader, dir string) (Manifest, error) {
	tr := tar.NewReader(r)
	sums := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return Manifest{}, errBackupIncomplete
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("reading the backup: %w", err)
		}
		if h.Name == ManifestFile {
			return finishBackup(tr, dir, sums)
		}
		if !backupPath(h.Name) || h.Typeflag != tar.TypeReg {
			return Manifest{}, fmt.Errorf("reading the backup: unexpected entry %q", h.Name)
		}
		if sums[h.Name], err = writeFile(dir, h.Name, tr); err != nil {
			return Manifest{}, err
		}
	}
}

// finishBackup reads the manifest, checks the files written against it
// and writes it.
func finishBackup(r io.Reader, dir string, sums map[string]string) (Manifest, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return Manifest{}, fmt.Errorf("reading the manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("reading the manifest: %w", err)
	}
	if len(m.SHA256) != len(sums) {
		return Manifest{}, fmt.Errorf("the manifest lists %d files, the backup holds %d", len(m.SHA256), len(sums))
	}
	for name, want := range m.SHA256 {
		if sums[name] != want {
			return Manifest{}, fmt.Errorf("%s: sha-256 %s, the manifest says %s", name, sums[name], want)
		}
	}
	if _, err := writeFile(dir, ManifestFile, strings.NewReader(string(b))); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// backupPath reports whether name is a file a backup may hold.
func backupPath(name string) bool {
	if name == CatalogFile {
		return true
	}
	d, f := path.Split(name)
	return d == StreamsDir+"/" && strings.HasSuffix(f, ".snapshot") && f != ".snapshot" && !strings.ContainsAny(f, `\:`)
}

// writeFile writes r to dir/name, synced, and returns its sha-256.
func writeFile(dir, name string, r io.Reader) (string, error) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// emptyDir returns an error unless dir is missing or holds nothing.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s is not empty (it holds %s): give a new directory", dir, entries[0].Name())
	}
	return nil
}

// clearDir removes what a failed unpack left in dir, which was empty.
func clearDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// errBackupIncomplete marks a backup without its manifest.
var errBackupIncomplete = errors.New("no manifest.json: the backup was cut short, or this is not a viaduct backup")
