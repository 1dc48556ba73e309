// Package sqliteconn opens SQLite pools whose every connection runs a
// list of pragmas first: those go-sqlite3 has no DSN parameter for
// (page_size, wal_autocheckpoint, journal_size_limit), and those whose
// order matters (a new file's page size before WAL mode writes its first
// page).
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
