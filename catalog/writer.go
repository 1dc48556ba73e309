package catalog

import (
	"database/sql"
	"fmt"

	"github.com/viaduct-mirror/viaduct/internal/sqliteconn"
)

// walCheckpointPages is the writer's wal_autocheckpoint: the WAL is copied
// back into the database once it holds this many pages (4 KiB each, so
// about 40 MB; 8 KiB each, so 80 MB, in a catalog made with filePageSize).
// SQLite's default, 1,000, checkpointed every dozen or so
// batches of the applier; each checkpoint writes back every page the WAL
// holds, and the same index pages, dirtied by every batch, were written
// back again and again. A tenfold interval writes each of them back once
// for many batches: it cut the CPU per applied event by about a third
// (BenchmarkApply). Readers pay a little for a longer WAL to search, and
// a crash leaves a longer WAL to recover; durability is unchanged.
const walCheckpointPages = 10000

// filePageSize is the page size of a new catalog file. A resource row is
// about a kilobyte (its plain columns, its packs and its provenance), and
// the resources table, clustered by URI (WITHOUT ROWID), keeps in a page
// only rows of up to a quarter of it: with SQLite's default of 4 KiB a
// typical row did not fit, and every row inserted wrote a 4 KiB overflow
// page of its own, for a catalog five times its data's size. At 8 KiB
// the rows fit, and the CPU per applied event fell by a quarter
// (BenchmarkApplyIngest). A catalog made before keeps its page size: WAL
// mode fixes it, and only a VACUUM outside it could change it.
const filePageSize = 8192

// openWriter opens the writer pool on dsn (plainDSN's pragmas), each
// connection then setting the page size (which only a file not yet
// written takes), WAL mode (which writes the file's first page, so it
// comes after), the checkpoint interval and the WAL's size limit (see
// wal.go).
func openWriter(dsn string) *sql.DB {
	return sqliteconn.Open(dsn,
		fmt.Sprintf("PRAGMA page_size = %d", filePageSize),
		"PRAGMA journal_mode = WAL",
		fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", walCheckpointPages),
		fmt.Sprintf("PRAGMA journal_size_limit = %d", walSizeLimit))
}
