package queue

import (
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats.go"
)

// AuthConfig is how a node proves who it is to an external NATS cluster
// and checks the cluster's certificate. Every field is optional; the
// embedded server needs none of them.
type AuthConfig struct {
	// User and Password authenticate with a user of the server's
	// configuration. An empty Password is read from VIADUCT_NATS_PASSWORD,
	// which keeps it out of the file.
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	// Token authenticates with the server's authorization token; empty
	// reads VIADUCT_NATS_TOKEN.
	Token string `yaml:"token"`
	// CredsFile is a NATS credentials file (a user JWT and its nkey seed),
	// as nsc writes it for a decentralised (operator) setup.
	CredsFile string `yaml:"creds_file"`
	// NKeyFile is a file holding a user nkey seed (SU...).
	NKeyFile string `yaml:"nkey_file"`
	// CAFile is a PEM file of the authorities that signed the servers'
	// certificates; setting it (or CertFile) requires TLS.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are this node's client certificate and key, for
	// a cluster that verifies clients (verify or verify_and_map).
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
}

// validate names the field at fault.
func (a *AuthConfig) validate() error {
	var errs []error
	for field, path := range map[string]string{"creds_file": a.CredsFile, "nkey_file": a.NKeyFile, "ca_file": a.CAFile, "cert_file": a.CertFile, "key_file": a.KeyFile} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			errs = append(errs, fmt.Errorf("queue.auth.%s: %w", field, err))
		}
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		errs = append(errs, errors.New("queue.auth.cert_file and key_file: set both or neither"))
	}
	if a.CredsFile != "" && a.NKeyFile != "" {
		errs = append(errs, errors.New("queue.auth.creds_file and nkey_file: set one, the credentials file already holds a seed"))
	}
	if a.Password != "" && a.User == "" {
		errs = append(errs, errors.New("queue.auth.password: set without user"))
	}
	return errors.Join(errs...)
}

// options turns the configuration into connection options.
func (a *AuthConfig) options() ([]nats.Option, error) {
	var opts []nats.Option
	if a.User != "" {
		pw := a.Password
		if pw == "" {
			pw = os.Getenv("VIADUCT_NATS_PASSWORD")
		}
		opts = append(opts, nats.UserInfo(a.User, pw))
	}
	token := a.Token
	if token == "" {
		token = os.Getenv("VIADUCT_NATS_TOKEN")
	}
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	if a.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	}
	if a.NKeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(a.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("queue.auth.nkey_file %s: %w", a.NKeyFile, err)
		}
		opts = append(opts, o)
	}
	if a.CAFile != "" {
		opts = append(opts, nats.RootCAs(a.CAFile))
	}
	if a.CertFile != "" {
		opts = append(opts, nats.ClientCert(a.CertFile, a.KeyFile))
	}
	return opts, nil
}
