package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/viaduct-mirror/viaduct/backup"
	"github.com/viaduct-mirror/viaduct/node"
)

// runBackup asks a running node for a backup through its admin listener
// and unpacks it into a new directory: the node takes it itself, so the
// catalog it writes and the embedded NATS server it holds are copied
// consistently while it works (see docs/runbook.md).
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", "--config FILE --out DIR [--url URL] [--token-file FILE]", stderr)
	path := fs.String("config", "", "the node's configuration `file`: admin.listen and admin.token_file are read from it")
	out := fs.String("out", "", "a new or empty `directory` to write the backup into")
	base := fs.String("url", "", "the admin listener's `URL` (default: http://<admin.listen>)")
	tokenFile := fs.String("token-file", "", "a `file` holding the admin token (default: admin.token_file, else VIADUCT_ADMIN_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (the backup's directory is --out DIR)", errUsage, fs.Arg(0))
	}
	if *path == "" || *out == "" {
		return fmt.Errorf("%w: --config and --out are required", errUsage)
	}
	cfg, err := node.Load(*path)
	if err != nil {
		return err
	}
	if *tokenFile != "" {
		cfg.Admin.TokenFile = *tokenFile
	}
	token, err := cfg.Admin.Token()
	if err != nil {
		return err
	}
	if *base == "" {
		*base = adminBase(cfg.Admin.Listen)
	}
	m, err := backup.Fetch(ctx, *base, token, *out)
	if err != nil {
		return err
	}
	var bytes int64
	for _, s := range m.Streams {
		bytes += s.Bytes
	}
	fmt.Fprintf(stdout, "backup of node %s written to %s\n", m.Node, *out)
	fmt.Fprintf(stdout, "  taken            %s by viaduct %s\n", m.Taken.Format("2006-01-02 15:04:05Z07:00"), m.Version)
	fmt.Fprintf(stdout, "  catalog          schema version %d, applied EVENTS up to sequence %d\n", m.CatalogSchema, m.CatalogApplied)
	if len(m.Streams) > 0 {
		fmt.Fprintf(stdout, "  streams          %d (%s), EVENTS up to sequence %d\n", len(m.Streams), byteCount(bytes), m.EventsLastSeq)
	} else {
		fmt.Fprintf(stdout, "  streams          none: the node uses an external NATS, back its streams up there\n")
	}
	fmt.Fprintf(stdout, "  blobs            not in the backup: copy the blob store (%s) after it\n", m.Blobs)
	return nil
}

// adminBase is the URL of an admin listener at listen, reached on
// loopback when it listens on every address.
func adminBase(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// byteCount is n in the largest unit that keeps it above 1.
func byteCount(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f), "0"), ".") + " " + units[i]
}
