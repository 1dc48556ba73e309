package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/mattn/go-sqlite3"
)

// walCheckpointPages is the writer's wal_autocheckpoint: the WAL is copied
// back into the database once it holds this many pages (4 KiB each, so
// about 40 MB). SQLite's default, 1,000, checkpointed every dozen or so
// batches of the applier; each checkpoint writes back every page the WAL
// holds, and the same index pages, dirtied by every batch, were written
// back again and again. A tenfold interval writes each of them back once
// for many batches: it cut the CPU per applied event by about a third
// (BenchmarkApply). Readers pay a little for a longer WAL to search, and
// a crash leaves a longer WAL to recover; durability is unchanged.
const walCheckpointPages = 10000

// connector opens connections with the driver's ConnectHook, for the
// pragmas go-sqlite3 has no DSN parameter for.
type connector struct {
	dsn string
	drv *sqlite3.SQLiteDriver
}

var _ driver.Connector = connector{}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// writerConnector connects the writer pool: dsn's pragmas plus the
// checkpoint interval.
func writerConnector(dsn string) driver.Connector {
	return connector{dsn: dsn, drv: &sqlite3.SQLiteDriver{ConnectHook: func(conn *sqlite3.SQLiteConn) error {
		_, err := conn.Exec(fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", walCheckpointPages), nil)
		return err
	}}}
}
