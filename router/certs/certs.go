// Package certs owns the certificates of a Sift deployment: it writes a
// deployment CA and the certificates routers and clients present to each
// other (mutual TLS), and loads them back as tls.Configs for the QUIC
// transport (TLS 1.3 only, ALPN sift/1).
//
// A certificates folder holds ca.pem, node.pem and node-key.pem (a router's
// certificate, valid as server and client, for the hosts given at init),
// client.pem and client-key.pem (a client's certificate), and ca-key.pem so
// that more certificates can be issued later. Keep ca-key.pem off routers in
// real deployments.
//
// Caveats: keys are ECDSA P-256 and certificates last ten years; there is
// no revocation.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// File names inside a certificates folder.
const (
	CAFile        = "ca.pem"
	CAKeyFile     = "ca-key.pem"
	NodeFile      = "node.pem"
	NodeKeyFile   = "node-key.pem"
	ClientFile    = "client.pem"
	ClientKeyFile = "client-key.pem"
)

// DefaultHosts are always in a node certificate, so loopback works.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

const validity = 10 * 365 * 24 * time.Hour

// Init writes a new CA, a node certificate for hosts (plus DefaultHosts)
// and a client certificate into dir, creating it if needed. It refuses,
// writing nothing, if any of the files already exists.
func Init(dir string, hosts []string) error {
	for _, name := range []string{CAFile, CAKeyFile, NodeFile, NodeKeyFile, ClientFile, ClientKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("certs init: %s already exists; remove the folder's certificates first", filepath.Join(dir, name))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("certs init: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("certs init: %w", err)
	}
	ca, caKey, err := newCA()
	if err != nil {
		return err
	}
	if err := writePair(dir, CAFile, CAKeyFile, ca, caKey); err != nil {
		return err
	}
	nodeHosts := append(append([]string(nil), DefaultHosts...), hosts...)
	node, nodeKey, err := issue(ca, caKey, "sift-node", nodeHosts,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth})
	if err != nil {
		return err
	}
	if err := writePair(dir, NodeFile, NodeKeyFile, node, nodeKey); err != nil {
		return err
	}
	client, clientKey, err := issue(ca, caKey, "sift-client", nil, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	if err != nil {
		return err
	}
	return writePair(dir, ClientFile, ClientKeyFile, client, clientKey)
}

func newCA() (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: CA key: %w", err)
	}
	tmpl := template("sift deployment CA")
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// issue creates a certificate signed by the CA, for the given DNS names or
// IP addresses and uses.
func issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, hosts []string, usage []x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s key: %w", cn, err)
	}
	tmpl := template(cn)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = usage
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s certificate: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func template(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"sift"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
	}
}

func writePair(dir, certName, keyName string, cert *x509.Certificate, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs: encode %s: %w", keyName, err)
	}
	if err := writePEM(filepath.Join(dir, keyName), "PRIVATE KEY", der, 0o600); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, certName), "CERTIFICATE", cert.Raw, 0o644)
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	return nil
}
