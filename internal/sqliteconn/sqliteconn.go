// Package sqliteconn opens SQLite pools whose every connection runs a
// list of pragmas first: those go-sqlite3 has no DSN parameter for
// (page_size, wal_autocheckpoint, journal_size_limit), and those whose
// order matters (a new file's page size before WAL mode writes its first
// page).
//
// SQLite takes its memory from C's malloc, on whichever thread a cgo call
// runs, and glibc gives each new thread that allocates an arena of its
// own, up to eight per core, each keeping the pages it has freed. A
// program that links this package caps the arenas at one per online core
// (at least two) as it loads, before any thread has allocated
// (arenas_glibc.go): at the peak of a baseline of 20,000 resources the
// small anonymous mappings are 12-14 MB with the cap and 20-21 MB
// without, at the same CPU (docs/benchmarks.md, Memory). Set from main
// the cap comes too late: the Go runtime's threads have made seven arenas
// by then. An operator's MALLOC_ARENA_MAX, which glibc reads itself, is
// left as it is; elsewhere than glibc nothing is set.
package sqliteconn

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// Open returns a pool on dsn (a go-sqlite3 DSN) whose connections each
// run pragmas, in order, when they open.
func Open(dsn string, pragmas ...string) *sql.DB {
	return sql.OpenDB(connector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		for _, p := range pragmas {
			if _, err := conn.Exec(p, nil); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	}}})
}

type connector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }
