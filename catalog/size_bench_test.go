package catalog

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/viaduct-mirror/viaduct"
	"github.com/viaduct-mirror/viaduct/resourcesync"
)

// repoTypes are the media types of repoEvents, in the proportions of an
// institutional repository's bitstreams.
var repoTypes = []string{"application/pdf", "application/pdf", "application/pdf", "image/jpeg", "text/plain",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "image/tiff", "application/zip"}

// repoEvents makes the events of a baseline of n resources from a
// repository as it lists them: URIs https://repo.example.org/bitstreams/
// <uuid>/content in random order (UUIDs), both digests, a length, a type,
// the Source's lastmod and hash (md5 and sha-256), a describedby link to
// the item's metadata, and for one resource in ten a via link to an
// origin elsewhere (a Source that is itself an aggregator). Events are in
// batches of 2,500 as the applier forms them at a baseline's rate.
func repoEvents(n int) []Applied {
	rng := rand.New(rand.NewPCG(5, 6))
	listed := t0.Add(-time.Minute)
	out := make([]Applied, n)
	for i := range out {
		var id [16]byte
		binary.LittleEndian.PutUint64(id[:8], rng.Uint64())
		binary.LittleEndian.PutUint64(id[8:], rng.Uint64())
		uuid := hex.EncodeToString(id[:])
		uuid = uuid[:8] + "-" + uuid[8:12] + "-" + uuid[12:16] + "-" + uuid[16:20] + "-" + uuid[20:]
		s, m := sha256.Sum256(id[:]), md5.Sum(id[:])
		length := 1000 + rng.Int64N(20<<20)
		typ := repoTypes[rng.IntN(len(repoTypes))]
		uri := "https://repo.example.org/bitstreams/" + uuid + "/content"
		ev := &viaduct.Event{Source: "repo", Collection: "repo", URI: uri, Op: resourcesync.Created,
			SHA256: hex.EncodeToString(s[:]), MD5: hex.EncodeToString(m[:]), Length: length, Type: typ}
		mod := t0.Add(-time.Duration(rng.Int64N(5*365*24*3600)) * time.Second)
		up := viaduct.Change{Source: "repo", Collection: "repo", URI: uri, Op: resourcesync.Created,
			Time: mod, Modified: mod, Listed: listed, Length: &length, Type: typ,
			Hash: resourcesync.Hashes{{Alg: resourcesync.MD5, Value: ev.MD5}, {Alg: resourcesync.SHA256, Value: ev.SHA256}},
			Links: []resourcesync.Link{{Rel: "describedby", Href: "https://repo.example.org/items/" + uuid + "/metadata.xml",
				Type: "application/xml"}}}
		if i%10 == 0 {
			up.Links = append(up.Links, resourcesync.Link{Rel: "via", Href: "https://origin.example.net/files/" + uuid,
				Modified: mod, Hash: up.Hash, Length: &length, Type: typ})
		}
		ev.Upstream = up
		out[i] = Applied{Seq: uint64(i + 1), At: t0.Add(time.Duration(i) * 100 * time.Microsecond), Event: ev}
	}
	return out
}

// BenchmarkCatalogSize measures what a catalog takes on disk per
// resource: a baseline of b.N resources applied through
// ApplyBatch, then, for the change log at the default retention, a
// second version of every tenth resource (its copy updated), the WAL
// checkpointed away. It reports the file's bytes per resource and, where
// the SQLite build has the dbstat table (go test -tags sqlite_dbstat),
// logs the bytes of each table and index, in total and per resource:
//
// The baseline is a repository's (repoEvents) or bench/staticsrc's
// (ingestEvents: short URIs, no links, the shape of the 1,000,000-resource
// baseline of docs/benchmarks.md):
//
//	go test -tags sqlite_dbstat -run '^$' -bench CatalogSize -benchtime 100000x ./catalog
func BenchmarkCatalogSize(b *testing.B) {
	b.Run("repository", func(b *testing.B) { benchCatalogSize(b, repoEvents(b.N)) })
	b.Run("staticsrc", func(b *testing.B) { benchCatalogSize(b, ingestEvents(b.N)) })
}

func benchCatalogSize(b *testing.B, evs []Applied) {
	ctx := context.Background()
	c := openTemp(b)
	updates := make([]Applied, 0, b.N/10)
	for i := 0; i < b.N; i += 10 {
		ev := *evs[i].Event
		s := sha256.Sum256([]byte(ev.SHA256))
		m := md5.Sum([]byte(ev.SHA256))
		ev.Op, ev.SHA256, ev.MD5 = resourcesync.Updated, hex.EncodeToString(s[:]), hex.EncodeToString(m[:])
		ev.Upstream.Op = resourcesync.Updated
		ev.Upstream.Time = ev.Upstream.Time.Add(24 * time.Hour)
		ev.Upstream.Modified = ev.Upstream.Time
		ev.Upstream.Hash = resourcesync.Hashes{{Alg: resourcesync.MD5, Value: ev.MD5}, {Alg: resourcesync.SHA256, Value: ev.SHA256}}
		seq := uint64(b.N + len(updates) + 1)
		updates = append(updates, Applied{Seq: seq, At: t0.Add(time.Hour + time.Duration(len(updates))*time.Millisecond), Event: &ev})
	}
	evs = append(evs, updates...)
	b.ResetTimer()
	for i := 0; i < len(evs); i += 2500 {
		if err := c.ApplyBatch(ctx, evs[i:min(i+2500, len(evs))]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if _, err := c.TruncateWAL(ctx); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(c.Path())
	if err != nil {
		b.Fatal(err)
	}
	n := float64(b.N)
	b.ReportMetric(float64(st.Size())/n, "file-B/resource")
	b.ReportMetric(float64(len(evs))/n, "changes/resource")
	tables, err := catalogTableBytes(ctx, c)
	if err != nil {
		b.Logf("no per-table figures (build with -tags sqlite_dbstat): %v", err)
		return
	}
	if b.N == 1 {
		return
	}
	var lines []string
	for _, t := range tables {
		lines = append(lines, fmt.Sprintf("%-28s %12d B %8.1f B/resource %8.1f B/row payload %6.1f%% in overflow pages",
			t.name, t.bytes, float64(t.bytes)/n, t.payloadPerRow, 100*float64(t.overflow)/float64(max(t.bytes, 1))))
		b.ReportMetric(float64(t.bytes)/n, t.name+"-B/resource")
	}
	// Printed rather than logged: a benchmark's log is cut at a few lines.
	fmt.Printf("%d resources, %d changes, file %d B, page size %d\n%s\n", b.N, len(evs), st.Size(), tables[0].pageSize,
		strings.Join(lines, "\n"))
	for _, table := range []string{"resources", "changes"} {
		cols, err := columnBytes(ctx, c, table)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s, mean stored bytes a row by column: %s\n", table, cols)
	}
}

// columnBytes is the mean length of each column of table as SQLite
// stores it (length() of a TEXT or BLOB, 8 for a number), largest first.
func columnBytes(ctx context.Context, c *Catalog, table string) (string, error) {
	rows, err := c.reader.QueryContext(ctx, `SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0`, table)
	if err != nil {
		return "", err
	}
	var cols []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return "", err
		}
		cols = append(cols, name)
	}
	rows.Close()
	type col struct {
		name string
		mean float64
	}
	var out []col
	for _, name := range cols {
		var mean float64
		q := fmt.Sprintf(`SELECT coalesce(avg(CASE WHEN typeof(%[1]s) IN ('integer', 'real') THEN 8 ELSE length(CAST(%[1]s AS BLOB)) END), 0) FROM %[2]s`, name, table)
		if err := c.reader.QueryRowContext(ctx, q).Scan(&mean); err != nil {
			return "", err
		}
		out = append(out, col{name, mean})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].mean > out[j].mean })
	var parts []string
	for _, c := range out {
		parts = append(parts, fmt.Sprintf("%s %.0f", c.name, c.mean))
	}
	return strings.Join(parts, ", "), nil
}

// tableBytes is what dbstat says of one table or index.
type tableBytes struct {
	name          string
	bytes         int64
	pageSize      int64
	payloadPerRow float64
	overflow      int64
}

// catalogTableBytes reads the pages of every table and index of c from
// the dbstat virtual table, largest first.
func catalogTableBytes(ctx context.Context, c *Catalog) ([]tableBytes, error) {
	rows, err := c.reader.QueryContext(ctx, `SELECT name, sum(pgsize), max(pgsize), sum(payload),
		sum(CASE WHEN pagetype = 'leaf' THEN ncell ELSE 0 END),
		sum(CASE WHEN pagetype = 'overflow' THEN pgsize ELSE 0 END) FROM dbstat GROUP BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tableBytes
	for rows.Next() {
		var t tableBytes
		var payload, cells int64
		if err := rows.Scan(&t.name, &t.bytes, &t.pageSize, &payload, &cells, &t.overflow); err != nil {
			return nil, err
		}
		if cells > 0 {
			t.payloadPerRow = float64(payload) / float64(cells)
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].bytes > out[j].bytes })
	return out, rows.Err()
}
