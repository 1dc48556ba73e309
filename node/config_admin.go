package node

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/viaduct-mirror/viaduct/admin"
)

// LoadAdmin reads only the admin section of a configuration file, for
// `viaduct admin --config`: an operator asking a node about itself needs
// its address and token, and a mistake in another section (the very
// thing they may be looking into) must not stand in the way. The section
// itself is read strictly: an unknown field in it is an error.
func LoadAdmin(path string) (admin.Config, error) {
	cfg := admin.Defaults()
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("reading config: %w", err)
	}
	var root struct {
		Admin yaml.Node `yaml:"admin"`
	}
	if err := yaml.Unmarshal(b, &root); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	if root.Admin.Kind == 0 {
		return cfg, nil
	}
	section, err := yaml.Marshal(&root.Admin)
	if err != nil {
		return cfg, fmt.Errorf("config %s: admin: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(section))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("config %s: admin (line %d): %w", path, root.Admin.Line, err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}
