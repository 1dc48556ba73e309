package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/node"
)

// adminUsage lists the admin subcommands: each is one request to the
// node's admin API, whose answer is shown as a table, or as the API's JSON
// with -o json.
const adminUsage = `[--config FILE | --url URL] [--token-file FILE] [-o table|json] <command> [arguments]

Commands:
  status                              the node: version, readiness, NATS, blob store, catalog
  sources [NAME]                      every Source with its state, last pass, cursor and counts;
                                      with NAME that Source alone, its last error in full
  sync NAME [--wait]                  a pass over the Source now (merged with one already asked for)
  rebaseline NAME [--wait]            forget the Source's cursors and compare its whole Resource List
  deadletters [--source NAME]         list dead letters (oldest first)
  deadletter SEQ                      show one dead letter
  retry SEQ | --source NAME | --all   queue dead letters again
  purge SEQ | --source NAME | --all   remove dead letters for good
  dumps COLLECTION [--wait]           rebuild the collection's Dumps now
  reload                              read the configuration file again (as SIGHUP does)

Tables are for people; -o json prints the admin API's answer as it is,
for scripts (docs/operations.md describes its fields). --config reads only
the file's admin section. The token comes from --token-file, else
admin.token_file of --config, else VIADUCT_ADMIN_TOKEN.`

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("admin", adminUsage, stderr)
	cfgPath := fs.String("config", "", "the node's configuration `file`: only its admin section (listen, token_file) is read")
	base := fs.String("url", "", "the admin listener's `URL` (default from --config, else http://127.0.0.1:8090)")
	tokenFile := fs.String("token-file", "", "a `file` holding the admin token")
	out := fs.String("o", "table", "output `format`: table (for people) or json (the API's answer, for scripts)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageErrorf("a command is required (viaduct admin --help)")
	}
	call, err := parseAdminCommand(fs.Args(), out)
	if err != nil {
		return err
	}
	if *out != "table" && *out != "json" {
		return usageErrorf("-o %s: the output is table or json", *out)
	}
	acfg := admin.Defaults()
	if *cfgPath != "" {
		if acfg, err = node.LoadAdmin(*cfgPath); err != nil {
			return err
		}
	}
	if *tokenFile != "" {
		acfg.TokenFile = *tokenFile
	}
	token, err := acfg.Token()
	if err != nil {
		return err
	}
	if *base == "" {
		*base = "http://" + acfg.Listen
	}
	body, status, err := adminDo(ctx, strings.TrimSuffix(*base, "/"), token, call)
	if err != nil {
		return err
	}
	if status >= 300 {
		return adminRefused(stdout, stderr, *out, call, body, status)
	}
	if *out == "json" {
		_, err := stdout.Write(body)
		return err
	}
	return call.render(stdout, body, time.Now())
}

// adminDo sends one request to the admin API and reads its answer.
func adminDo(ctx context.Context, base, token string, c adminCall) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("asking the node at %s: %w", base, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("asking the node at %s: %w", base, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("reading the node's answer: %w", err)
	}
	return body, resp.StatusCode, nil
}

// adminRefused shows an answer that is not a success: its error in one
// line (the answer as it is with -o json) and the HTTP status, exit 1.
// An answer that carries a result (a pass that failed) is rendered.
func adminRefused(stdout, stderr io.Writer, format string, call adminCall, body []byte, status int) error {
	var e struct {
		Error string `json:"error"`
		State string `json:"state"`
	}
	_ = json.Unmarshal(body, &e)
	switch {
	case format == "json":
		stdout.Write(body)
	case e.State != "":
		call.render(stdout, body, time.Now())
	case e.Error != "":
		fmt.Fprintf(stderr, "viaduct admin: %s\n", e.Error)
	default:
		stderr.Write(bytes.TrimSpace(body))
		fmt.Fprintln(stderr)
	}
	fmt.Fprintf(stderr, "viaduct admin: the node answered %d %s\n", status, http.StatusText(status))
	return errFailed
}

// usageError is a mistake in how a command was called: exit code 2, its
// message shown as it is.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == errUsage }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}
