package check

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// ComposeFile is the compose project of deploy/compose.
const ComposeFile = "compose/compose.yaml"

// ComposeEnv stands in for the variables compose/README.md tells an
// operator to export: compose refuses to load the file without them.
var ComposeEnv = map[string]string{
	"MINIO_ROOT_PASSWORD": "set-by-the-operator",
	"VIADUCT_ADMIN_TOKEN": "set-by-the-operator",
}

// Compose loads a compose file as `docker compose` does: the schema,
// interpolation with env, the conversion of every value to its type
// (durations, sizes, ports) and the consistency checks (networks,
// volumes, secrets and dependencies that are declared).
func Compose(ctx context.Context, file string, env map[string]string) (*types.Project, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", file, err)
	}
	details := types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs}},
		// The loader adds to the environment it is given.
		Environment: maps.Clone(env),
	}
	p, err := loader.LoadWithContext(ctx, details)
	if err != nil {
		return nil, fmt.Errorf("loading %s with the compose loader: %w", file, err)
	}
	return p, nil
}
