package deploy

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// composeFile is the part of a compose file the tests check.
type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string `yaml:"subnet"`
			} `yaml:"config"`
		} `yaml:"ipam"`
	} `yaml:"networks"`
	Volumes map[string]any `yaml:"volumes"`
	Secrets map[string]struct {
		Environment string `yaml:"environment"`
		File        string `yaml:"file"`
	} `yaml:"secrets"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       composeBuild      `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Networks    composeNetworks   `yaml:"networks"`
	Secrets     []string          `yaml:"secrets"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// composeBuild is a service's build: a context path, or a map with the
// context and the Dockerfile.
type composeBuild struct {
	Context    string            `yaml:"context"`
	Dockerfile string            `yaml:"dockerfile"`
	Args       map[string]string `yaml:"args"`
}

func (b *composeBuild) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		b.Context = n.Value
		return nil
	}
	type plain composeBuild
	return n.Decode((*plain)(b))
}

// composeNetworks are the networks a service joins, with its fixed IPv4
// address on each (empty for none); compose takes a list or a map.
type composeNetworks map[string]string

func (c *composeNetworks) UnmarshalYAML(n *yaml.Node) error {
	*c = composeNetworks{}
	switch n.Kind {
	case yaml.SequenceNode:
		var names []string
		if err := n.Decode(&names); err != nil {
			return err
		}
		for _, s := range names {
			(*c)[s] = ""
		}
		return nil
	case yaml.MappingNode:
		var m map[string]struct {
			IPv4 string `yaml:"ipv4_address"`
		}
		if err := n.Decode(&m); err != nil {
			return err
		}
		for k, v := range m {
			(*c)[k] = v.IPv4
		}
		return nil
	}
	return fmt.Errorf("networks: a list or a map, not %v", n.Tag)
}

// mount is one entry of a service's volumes: a bind mount (source starts
// with . or /) or a named volume.
type mount struct {
	source, target string
	bind, readOnly bool
}

func parseMount(t *testing.T, svc, s string) mount {
	t.Helper()
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		t.Fatalf("service %s: volume %q is not source:target[:mode]", svc, s)
	}
	m := mount{source: parts[0], target: parts[1]}
	m.bind = strings.HasPrefix(m.source, ".") || strings.HasPrefix(m.source, "/")
	m.readOnly = len(parts) == 3 && parts[2] == "ro"
	return m
}

// mounts are a service's volumes by target.
func (s composeService) mounts(t *testing.T, name string) map[string]mount {
	t.Helper()
	out := map[string]mount{}
	for _, v := range s.Volumes {
		m := parseMount(t, name, v)
		if _, dup := out[m.target]; dup {
			t.Errorf("service %s: two volumes at %s", name, m.target)
		}
		out[m.target] = m
	}
	return out
}

// flag is the value of --name in args, as "--name value" or
// "--name=value"; ok is false when it is not there.
func flag(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}
