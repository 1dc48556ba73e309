package admin

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// TokenEnv is the environment variable the admin token may come from when
// no token file is configured.
const TokenEnv = "VIADUCT_ADMIN_TOKEN"

// Config is the admin listener's section of the configuration file.
type Config struct {
	// Listen is the admin listener's address: the API, the status page,
	// /metrics, pprof and the health probes. Default 127.0.0.1:8090. Keep
	// it on loopback or a private interface.
	Listen string `yaml:"listen"`
	// TokenFile holds the bearer token admin requests must carry (one
	// line; surrounding white space is ignored). Left empty, the token is
	// read from the environment variable VIADUCT_ADMIN_TOKEN.
	TokenFile string `yaml:"token_file"`
	// AllowNoTokenOnLoopback lets loopback clients call without a token
	// when none is configured: for a one-machine node whose operators all
	// have a shell on it. Requests from other addresses are still refused.
	// Default false.
	AllowNoTokenOnLoopback bool `yaml:"allow_no_token_on_loopback"`
}

// Defaults is the admin section an operator gets without saying anything.
func Defaults() Config {
	return Config{Listen: "127.0.0.1:8090"}
}

// Validate checks the section, naming fields as in the file.
func (c *Config) Validate() error {
	var errs []error
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		errs = append(errs, fmt.Errorf("admin.listen: %q is not host:port: %w", c.Listen, err))
	}
	if c.AllowNoTokenOnLoopback && err == nil && !isLoopbackHost(host) {
		errs = append(errs, fmt.Errorf("admin.allow_no_token_on_loopback: admin.listen %q is not a loopback address; a listener others can reach needs a token", c.Listen))
	}
	if c.TokenFile != "" {
		if _, err := c.Token(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Token reads the admin token: the token file's first line, or the
// environment variable. It is empty when neither is set.
func (c *Config) Token() (string, error) {
	if c.TokenFile == "" {
		return strings.TrimSpace(os.Getenv(TokenEnv)), nil
	}
	b, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return "", fmt.Errorf("admin.token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("admin.token_file: %s is empty", c.TokenFile)
	}
	return tok, nil
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
