package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/viaduct-mirror/viaduct/admin"
	"github.com/viaduct-mirror/viaduct/node"
)

// adminUsage lists the admin subcommands: each is one request to the
// node's admin API, whose JSON answer is printed.
const adminUsage = `[--config FILE | --url URL] [--token-file FILE] <command> [arguments]

Commands:
  status                          the node: version, readiness, NATS, blob store, catalog
  sources                         every Source with its state, last pass, cursor and counts
  source NAME                     one Source
  sync NAME [--wait]              a pass over the Source now (merged with one already asked for)
  rebaseline NAME [--wait]        forget the Source's cursors and compare its whole Resource List
  deadletters [--source NAME]     list dead letters (oldest first)
  deadletter SEQ                  show one dead letter
  retry SEQ | --source NAME | --all   queue dead letters again
  purge SEQ | --source NAME | --all   remove dead letters for good
  dumps COLLECTION [--wait]       rebuild the collection's Dumps now
  reload                          read the configuration file again (as SIGHUP does)

The token comes from --token-file, else admin.token_file of --config,
else VIADUCT_ADMIN_TOKEN.`

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("admin", adminUsage, stderr)
	cfgPath := fs.String("config", "", "the node's configuration `file`: admin.listen and admin.token_file are read from it")
	base := fs.String("url", "", "the admin listener's `URL` (default from --config, else http://127.0.0.1:8090)")
	tokenFile := fs.String("token-file", "", "a `file` holding the admin token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	acfg := admin.Defaults()
	if *cfgPath != "" {
		cfg, err := node.Load(*cfgPath)
		if err != nil {
			return err
		}
		acfg = cfg.Admin
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
	method, path, err := adminRequest(fs.Args())
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(*base, "/")+path, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking the node at %s: %w", *base, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(stdout, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		fmt.Fprintf(stderr, "viaduct admin: the node answered %s\n", resp.Status)
		return errFailed
	}
	return nil
}

// adminRequest maps a command line to the admin API's method and path.
func adminRequest(args []string) (string, string, error) {
	if len(args) == 0 {
		return "", "", fmt.Errorf("a command is required (viaduct admin --help)")
	}
	cmd, rest := args[0], args[1:]
	q := url.Values{}
	var pos []string
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case a == "--wait":
			q.Set("wait", "true")
		case a == "--all":
			q.Set("all", "true")
		case a == "--source" && i+1 < len(rest):
			q.Set("source", rest[i+1])
			i++
		case strings.HasPrefix(a, "--"):
			return "", "", fmt.Errorf("%s: unknown flag %s", cmd, a)
		default:
			pos = append(pos, a)
		}
	}
	one := func(what string) (string, error) {
		if len(pos) != 1 {
			return "", fmt.Errorf("%s takes one %s", cmd, what)
		}
		return url.PathEscape(pos[0]), nil
	}
	with := func(p string) string {
		if len(q) == 0 {
			return p
		}
		return p + "?" + q.Encode()
	}
	var err error
	var arg string
	switch cmd {
	case "status":
		return "GET", "/admin/status", nil
	case "sources":
		return "GET", "/admin/sources", nil
	case "source":
		arg, err = one("Source name")
		return "GET", "/admin/sources/" + arg, err
	case "sync", "rebaseline":
		arg, err = one("Source name")
		return "POST", with("/admin/sources/" + arg + "/" + cmd), err
	case "deadletters":
		return "GET", with("/admin/deadletters"), nil
	case "deadletter":
		arg, err = one("sequence number")
		return "GET", "/admin/deadletters/" + arg, err
	case "retry", "purge":
		if len(pos) == 0 {
			return "POST", with("/admin/deadletters/" + cmd), nil
		}
		arg, err = one("sequence number")
		if cmd == "purge" {
			return "DELETE", "/admin/deadletters/" + arg, err
		}
		return "POST", "/admin/deadletters/" + arg + "/retry", err
	case "dumps":
		arg, err = one("collection")
		return "POST", with("/admin/dumps/" + arg), err
	case "reload":
		return "POST", "/admin/reload", nil
	}
	return "", "", fmt.Errorf("unknown command %q (viaduct admin --help)", cmd)
}
