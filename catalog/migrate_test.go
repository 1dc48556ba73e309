package catalog

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/viaduct-mirror/viaduct/internal/testutil"
)

// TestNewerSchemaRefused: a catalog a newer build wrote is not opened,
// and the error names both versions and the way back, and leaves the
// file as it was.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	c := openAt(t, path)
	mustApply(t, c, 1, event("s", "c", "http://s/a", "created", "one"))
	c.Close()
	newer := SchemaVersion() + 1
	execOn(t, path, "PRAGMA user_version = "+itoa(newer))

	_, err := Open(context.Background(), path, nil)
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("Open of a catalog at schema %d: %v, want ErrSchemaNewer", newer, err)
	}
	for _, want := range []string{"schema version " + itoa(newer), "up to " + itoa(SchemaVersion()), "restore the backup taken before the upgrade"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	execOn(t, path, "PRAGMA user_version = "+itoa(SchemaVersion()))
	if got := lastApplied(t, openAt(t, path)); got != 1 {
		t.Fatalf("after the refusal the catalog has applied %d, want 1", got)
	}
}

// TestMigrationLogged: an older catalog says from and to which version
// it migrates, at INFO; a new one says once that it was created.
func TestMigrationLogged(t *testing.T) {
	var logs testutil.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	path := packFixture(t)
	toV8(t, path)
	db, err := sql.Open("sqlite3", dsn(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	dropV3(t, db)
	db.Close()

	c, err := Open(context.Background(), path, log)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	out := logs.String()
	if want := `"msg":"catalog schema migrating","from":2,"to":` + itoa(SchemaVersion()); !strings.Contains(out, want) {
		t.Errorf("log does not say %s:\n%s", want, out)
	}
	if want := `"msg":"catalog schema migrated","from":2,"to":3`; !strings.Contains(out, want) {
		t.Errorf("log does not say %s:\n%s", want, out)
	}

	var fresh testutil.Buffer
	c, err = Open(context.Background(), filepath.Join(t.TempDir(), "new.db"), slog.New(slog.NewJSONHandler(&fresh, nil)))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got := strings.Count(fresh.String(), "\n"); got != 1 || !strings.Contains(fresh.String(), `"msg":"catalog created","schema_version":`+itoa(SchemaVersion())) {
		t.Errorf("a new catalog logged %d lines, want one saying it was created:\n%s", got, fresh.String())
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
