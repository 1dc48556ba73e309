package check

import (
	"context"
	"maps"
	"testing"
)

func TestComposeLoads(t *testing.T) {
	p, err := Compose(context.Background(), path(ComposeFile), ComposeEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Services) == 0 {
		t.Fatal("no services")
	}
}

// TestComposeNeedsTheOperatorsSecrets checks that compose refuses to
// start without the variables the README asks for, rather than run MinIO
// and the nodes with an empty password.
func TestComposeNeedsTheOperatorsSecrets(t *testing.T) {
	for name := range ComposeEnv {
		env := maps.Clone(ComposeEnv)
		delete(env, name)
		_, err := Compose(context.Background(), path(ComposeFile), env)
		refused(t, breakage{name: "without " + name}, err, name)
	}
}

func TestComposeRefusesBroken(t *testing.T) {
	for _, c := range []struct {
		breakage
		want string
	}{
		{breakage{"healthcheck interval in an unknown unit", "interval: 5s", "interval: 5sec"}, `unknown unit "sec"`},
		{breakage{"a misspelt service key", "restart: unless-stopped", "restrat: unless-stopped"}, "restrat"},
		{breakage{"a dependency on no service", "nats-3: {condition: service_healthy}", "nats-4: {condition: service_healthy}"}, "nats-4"},
		{breakage{"an undeclared volume", "- minio-data:/data", "- mino-data:/data"}, "mino-data"},
		{breakage{"a port that is no port", `"127.0.0.1:9090:9090"`, `"127.0.0.1:9090:90900"`}, "90900"},
	} {
		_, err := Compose(context.Background(), broken(t, ComposeFile, c.breakage), ComposeEnv)
		refused(t, c.breakage, err, c.want)
	}
}
