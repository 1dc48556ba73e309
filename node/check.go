package node

import (
	"context"
)

// CheckStart runs every check Start runs on cfg before it opens anything:
// the sections' own validation, the S3 store's fields, the republisher's,
// the Sources' and the admin token. It reaches no server. Every error is
// reported, each naming its field as written in the file.
func CheckStart(ctx context.Context, cfg Config) error {
	return cfg.Validate()
}
