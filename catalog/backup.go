package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
)

// BackupInfo is what a copy of a catalog says of itself: the schema it is
// written in and the last EVENTS sequence it had applied, where a node
// started on it resumes.
type BackupInfo struct {
	SchemaVersion int
	Applied       uint64
}

// Backup writes a consistent copy of the catalog to dst, which must not
// exist, while the node goes on writing: SQLite's online backup copies
// every page in one step on one of the streaming readers' connections,
// inside one read transaction, so the copy is the catalog as it was at one
// commit, with the sequence that commit recorded. The applier is not held:
// under WAL a reader never blocks the writer, and only the checkpoints
// wait for the copy to end. It returns what the copy holds.
func (c *Catalog) Backup(ctx context.Context, dst string) (BackupInfo, error) {
	where := fmt.Sprintf("back up catalog %s to %s", c.path, dst)
	dst, err := filepath.Abs(dst)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("%s: %w", where, err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return BackupInfo{}, fmt.Errorf("%s: %w", where, os.ErrExist)
	}
	if err := c.copyTo(ctx, dst); err != nil {
		os.Remove(dst)
		return BackupInfo{}, fmt.Errorf("%s: %w", where, err)
	}
	info, err := ReadBackupInfo(ctx, dst)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("%s: %w", where, err)
	}
	return info, nil
}

// copyTo runs the online backup from a reader connection into dst.
func (c *Catalog) copyTo(ctx context.Context, dst string) error {
	src, err := c.scans.Conn(ctx)
	if err != nil {
		return fmt.Errorf("reader connection: %w", err)
	}
	defer src.Close()
	out, err := sql.Open("sqlite3", (&url.URL{Scheme: "file", Path: dst}).String())
	if err != nil {
		return fmt.Errorf("create copy: %w", err)
	}
	defer out.Close()
	dc, err := out.Conn(ctx)
	if err != nil {
		return fmt.Errorf("create copy: %w", err)
	}
	defer dc.Close()
	return src.Raw(func(s any) error {
		return dc.Raw(func(d any) error {
			from, ok1 := s.(*sqlite3.SQLiteConn)
			to, ok2 := d.(*sqlite3.SQLiteConn)
			if !ok1 || !ok2 {
				return errors.New("connections are not go-sqlite3's")
			}
			b, err := to.Backup("main", from, "main")
			if err != nil {
				return fmt.Errorf("start online backup: %w", err)
			}
			// -1: every page in one step, so that the copy is one
			// snapshot; a copy in steps starts over whenever the
			// applier commits between two of them.
			done, err := b.Step(-1)
			if ferr := b.Finish(); err == nil {
				err = ferr
			}
			if err == nil && !done {
				err = errors.New("online backup stopped before the last page")
			}
			if err != nil {
				return fmt.Errorf("online backup: %w", err)
			}
			return nil
		})
	})
}

// ReadBackupInfo reads the schema version and last applied sequence of the
// closed catalog file at path without changing it (no journal, no
// migration): a backup is checked before anything is restored from it.
func ReadBackupInfo(ctx context.Context, path string) (BackupInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("read catalog copy %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return BackupInfo{}, fmt.Errorf("read catalog copy %s: %w", path, err)
	}
	defer db.Close()
	var info BackupInfo
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&info.SchemaVersion); err != nil {
		return BackupInfo{}, fmt.Errorf("read catalog copy %s: schema version: %w", path, err)
	}
	var seq int64
	if err := db.QueryRowContext(ctx, "SELECT seq FROM applied WHERE id = 1").Scan(&seq); err != nil {
		return BackupInfo{}, fmt.Errorf("read catalog copy %s: last applied sequence: %w", path, err)
	}
	info.Applied = uint64(seq)
	return info, nil
}

// CheckCopy checks the closed catalog file at path without changing it:
// SQLite's integrity check over every page, table and index, then what
// ReadBackupInfo reads. A copy fetched from elsewhere is checked before a
// node starts on it.
func CheckCopy(ctx context.Context, path string) (BackupInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("check catalog copy %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return BackupInfo{}, fmt.Errorf("check catalog copy %s: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check(20)")
	if err != nil {
		return BackupInfo{}, fmt.Errorf("check catalog copy %s: integrity check: %w", path, err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			rows.Close()
			return BackupInfo{}, fmt.Errorf("check catalog copy %s: integrity check: %w", path, err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return BackupInfo{}, fmt.Errorf("check catalog copy %s: integrity check: %w", path, err)
	}
	if len(problems) > 0 {
		return BackupInfo{}, fmt.Errorf("check catalog copy %s: integrity check found %d problems, the first: %s", path, len(problems), problems[0])
	}
	return ReadBackupInfo(ctx, path)
}
