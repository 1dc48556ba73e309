package queue_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/viaduct-mirror/viaduct/queue"
	"github.com/viaduct-mirror/viaduct/queue/queuetest"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "viaduct test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a certificate for 127.0.0.1 usable by a server or a client
// and returns its PEM certificate and key.
func (ca *testCA) issue(t *testing.T, serial int64, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "viaduct test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A node reaches a cluster that wants TLS with client certificates and a
// user and password, all from its configuration (the password from the
// environment); without its certificate or with a wrong password it is
// refused.
func TestAuthTLSAndPassword(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t)
	srvCert, srvKey := ca.issue(t, 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.issue(t, 3, x509.ExtKeyUsageClientAuth)
	pair, err := tls.X509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	s, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		Username: "viaduct", Password: "s3cret",
		TLS: true, TLSVerify: true, TLSTimeout: 5,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12},
		NoLog:     true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}

	cfg := queuetest.Config(t)
	cfg.URL, cfg.Dir = s.ClientURL(), ""
	cfg.Auth = queue.AuthConfig{
		User:     "viaduct",
		CAFile:   writeFile(t, dir, "ca.pem", ca.pem),
		CertFile: writeFile(t, dir, "client.pem", cliCert),
		KeyFile:  writeFile(t, dir, "client-key.pem", cliKey),
	}
	t.Setenv("VIADUCT_NATS_PASSWORD", "s3cret")
	ctx := ctxTimeout(t, 30*time.Second)
	q, err := queue.Open(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open with TLS, client certificate and password: %v", err)
	}
	if err := q.PublishChange(ctx, testChange(1)); err != nil {
		t.Fatal(err)
	}
	q.Close()

	noCert := cfg
	noCert.Auth.CertFile, noCert.Auth.KeyFile = "", ""
	if q, err := queue.Open(ctx, noCert, slog.New(slog.DiscardHandler)); err == nil {
		q.Close()
		t.Fatal("opened without the client certificate the cluster requires")
	}
	t.Setenv("VIADUCT_NATS_PASSWORD", "wrong")
	if q, err := queue.Open(ctx, cfg, slog.New(slog.DiscardHandler)); err == nil {
		q.Close()
		t.Fatal("opened with a wrong password")
	}
}

func TestAuthConfigNamesTheField(t *testing.T) {
	cfg := queuetest.Config(t)
	cfg.URL, cfg.Dir = "nats://127.0.0.1:4222", ""
	cfg.Auth = queue.AuthConfig{CertFile: filepath.Join(t.TempDir(), "missing.pem"), Password: "x"}
	err := cfg.Validate()
	for _, want := range []string{"queue.auth.cert_file", "key_file", "queue.auth.password"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
