package s3

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// credentials signs requests with the keys of the configuration when they
// are set (with the session token, for temporary keys), and otherwise with
// the first of minio-go's chain that yields keys: the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, then
// MINIO_ROOT_USER and its password), the AWS shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, profile AWS_PROFILE),
// then IAM: a web identity token (AWS_WEB_IDENTITY_TOKEN_FILE and
// AWS_ROLE_ARN, as Kubernetes IRSA sets them), the ECS task role or the
// EC2 instance profile. The chain is asked again when its keys expire.
func (c *Config) credentials() *credentials.Credentials {
	if c.AccessKey != "" {
		return credentials.NewStaticV4(c.AccessKey, c.SecretKey, c.SessionToken)
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	})
}

// checkKeys refuses half a key pair: both or neither (the chain).
func (c *Config) checkKeys() error {
	switch {
	case c.AccessKey != "" && c.SecretKey == "":
		return errors.New("s3 secret_key: not set while access_key is (set both, or neither to use the environment, the AWS files or IAM)")
	case c.AccessKey == "" && c.SecretKey != "":
		return errors.New("s3 access_key: not set while secret_key is (set both, or neither to use the environment, the AWS files or IAM)")
	case c.AccessKey == "" && c.SessionToken != "":
		return errors.New("s3 session_token: set without access_key and secret_key")
	}
	return nil
}

// transport is minio-go's default transport keeping MaxIdleConns
// connections to the endpoint, and trusting CAFile's certificates besides
// the system's, for an S3 service whose certificate a private authority
// signed.
func (c *Config) transport() (http.RoundTripper, error) {
	tr, err := minio.DefaultTransport(c.TLS)
	if err != nil {
		return nil, fmt.Errorf("s3 transport: %w", err)
	}
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = c.MaxIdleConns, c.MaxIdleConns
	if c.CAFile == "" {
		return tr, nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("s3 ca_file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("s3 ca_file %s: no PEM certificate in it", c.CAFile)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr, nil
}
