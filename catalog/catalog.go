package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"sync/atomic"

	// The catalog's SQLite driver, registered as "sqlite3" for the
	// readers; the writer connects through openWriter.
	_ "github.com/mattn/go-sqlite3"
)

// ErrNotFound is returned by single-row reads when there is no such row.
var ErrNotFound = errors.New("not found in catalog")

// ErrInvalid marks an event the catalog refuses to apply (unknown op,
// missing collection, URI or sha-256). Retrying it cannot succeed: the
// applier dead-letters it and records its sequence with Skip.
var ErrInvalid = errors.New("invalid event")

// busyTimeoutMS bounds how long a connection waits for another one's lock.
// Only checkpoints and the migration at open ever contend with the writer.
const busyTimeoutMS = 10000

// Catalog is an open catalog file. It is safe for concurrent use: writes
// are serialised on one connection, reads run in parallel on others.
type Catalog struct {
	path   string
	log    *slog.Logger
	writer *sql.DB
	reader *sql.DB
	// scans serves the long single-snapshot reads (see stream.go), apart
	// from reader so that a slow download never starves the short reads,
	// which those very reads make while they stream.
	scans *sql.DB
	stmts writeStmts
	reads readStmts
	// outranked counts the events that arrived after a later statement
	// of their Source (see Outranked).
	outranked atomic.Uint64
}

// Open opens the catalog at path, creating it if needed, and brings its
// schema up to the version this build knows. A catalog written by a newer
// build is refused rather than misread. A nil logger discards.
func Open(ctx context.Context, path string, logger *slog.Logger) (*Catalog, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open catalog %s: %w", path, err)
	}
	c := &Catalog{path: abs, log: logger}
	c.writer = openWriter(plainDSN(abs, "_txlock=immediate&_cache_size=-16384"))
	// One writer: SQLite allows one anyway, and holding it in one pooled
	// connection turns lock contention into queueing in database/sql.
	c.writer.SetMaxOpenConns(1)
	c.writer.SetMaxIdleConns(1)
	c.writer.SetConnMaxLifetime(0)
	if err := c.migrate(ctx); err != nil {
		c.writer.Close()
		return nil, fmt.Errorf("open catalog %s: %w", abs, err)
	}
	if err := c.stmts.prepare(ctx, c.writer); err != nil {
		c.Close()
		return nil, fmt.Errorf("open catalog %s: %w", abs, err)
	}
	c.reader, err = sql.Open("sqlite3", dsn(abs, "_query_only=true"))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("open catalog %s: %w", abs, err)
	}
	n := max(4, runtime.NumCPU())
	c.reader.SetMaxOpenConns(n)
	c.reader.SetMaxIdleConns(n)
	if err := c.reader.PingContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("open catalog %s: readers: %w", abs, err)
	}
	if err := c.reads.prepare(ctx, c.reader); err != nil {
		c.Close()
		return nil, fmt.Errorf("open catalog %s: readers: %w", abs, err)
	}
	if c.scans, err = openScans(abs); err != nil {
		c.Close()
		return nil, fmt.Errorf("open catalog %s: streaming readers: %w", abs, err)
	}
	return c, nil
}

// dsn builds a go-sqlite3 URI for the file with the pragmas every
// connection needs, plus the pool-specific extra.
func dsn(path, extra string) string { return plainDSN(path, "_journal_mode=WAL&"+extra) }

// plainDSN is dsn without the journal mode, for the writer, which sets
// it after the page size of a new file (see openWriter).
func plainDSN(path, extra string) string {
	u := url.URL{Scheme: "file", Path: path}
	return u.String() + "?_busy_timeout=" + fmt.Sprint(busyTimeoutMS) +
		"&_synchronous=NORMAL&_foreign_keys=on&" + extra
}

// Path is the absolute path of the catalog file.
func (c *Catalog) Path() string { return c.path }

// Close closes both pools. Committed changes are durable without it; Close
// only releases connections and lets SQLite checkpoint and tidy the WAL.
func (c *Catalog) Close() error {
	var errs []error
	if c.scans != nil {
		errs = append(errs, c.scans.Close())
	}
	errs = append(errs, c.reads.close())
	if c.reader != nil {
		errs = append(errs, c.reader.Close())
	}
	errs = append(errs, c.stmts.close())
	if c.writer != nil {
		errs = append(errs, c.writer.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close catalog %s: %w", c.path, err)
	}
	return nil
}

// write runs fn in one immediate transaction on the writer connection and
// commits it, or rolls it back if fn fails.
func (c *Catalog) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := c.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
