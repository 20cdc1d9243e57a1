// Package certs owns the certificates of a Sift deployment: it writes a
// deployment CA and the certificates routers and clients present to each
// other (mutual TLS), and loads them back as tls.Configs for the QUIC
// transport (TLS 1.3 only, ALPN sift/1).
//
// Every certificate carries its holder's identity (identity.go): a role,
// router or client, and a name, in a sift://ROLE/NAME URI subject
// alternative name (the name is also the common name). A router accepts a
// link only from a router certificate naming the router its link hello
// names, and a client connection only from a client certificate; a
// client's permissions (router/perm) are looked up by its certificate's
// name.
//
// A deployment keeps its CA (ca.pem, ca-key.pem) with the operator and
// issues one folder per router (ca.pem, node.pem, node-key.pem) and per
// client (ca.pem, client.pem, client-key.pem) with Issue. Init writes a
// development folder for one machine instead: the CA, a router
// certificate named AnyRouter ("*": any router name, for every router of
// the machine) and a client certificate named "sift-client".
//
// Caveats: keys are ECDSA P-256 and certificates last ten years; there is
// no revocation list: a certificate is revoked by rotating the CA
// (routers reload ca.pem on SIGHUP, Store.Reload).
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/url"
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

// DevClientName is the name of the client certificate Init writes.
const DevClientName = "sift-client"

const validity = 10 * 365 * 24 * time.Hour

// Init writes a development folder into dir, creating it if needed: a new
// CA, a router certificate named AnyRouter for hosts (plus DefaultHosts)
// and a client certificate named DevClientName. It refuses, writing
// nothing, if any of the files already exists.
func Init(dir string, hosts []string) error {
	if err := refuseExisting("certs init", dir, CAFile, CAKeyFile, NodeFile, NodeKeyFile, ClientFile, ClientKeyFile); err != nil {
		return err
	}
	ca, caKey, err := writeCA(dir)
	if err != nil {
		return err
	}
	if err := issueInto(dir, ca, caKey, Identity{Role: Node, Name: AnyRouter}, hosts); err != nil {
		return err
	}
	return issueInto(dir, ca, caKey, Identity{Role: Client, Name: DevClientName}, nil)
}

// InitCA writes only a new CA (ca.pem, ca-key.pem) into dir, for Issue;
// it refuses if either exists.
func InitCA(dir string) error {
	if err := refuseExisting("certs init", dir, CAFile, CAKeyFile); err != nil {
		return err
	}
	_, _, err := writeCA(dir)
	return err
}

func refuseExisting(what, dir string, names ...string) error {
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("%s: %s already exists; remove it first or write elsewhere", what, filepath.Join(dir, name))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func writeCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	ca, caKey, err := newCA()
	if err != nil {
		return nil, nil, err
	}
	return ca, caKey, writePair(dir, CAFile, CAKeyFile, ca, caKey)
}

// Issue reads the CA in caDir (ca.pem and ca-key.pem) and writes into
// outDir, creating it if needed, a copy of ca.pem and a certificate with
// its key for id: node.pem and node-key.pem for a router (valid as server
// and client, for hosts plus DefaultHosts), client.pem and client-key.pem
// for a client. It refuses, writing nothing, if the certificate or key
// exists in outDir or outDir holds a different ca.pem.
func Issue(caDir string, id Identity, hosts []string, outDir string) error {
	if err := checkName(id); err != nil {
		return fmt.Errorf("certs issue: %w", err)
	}
	if id.Name == AnyRouter {
		return errors.New("certs issue: the router name * is for Init's development certificate only")
	}
	ca, caKey, caPEM, err := readCA(caDir)
	if err != nil {
		return err
	}
	certFile, keyFile := files(id.Role)
	if err := refuseExisting("certs issue", outDir, certFile, keyFile); err != nil {
		return err
	}
	outCA := filepath.Join(outDir, CAFile)
	switch old, err := os.ReadFile(outCA); {
	case err == nil && string(old) != string(caPEM):
		return fmt.Errorf("certs issue: %s holds another CA; write elsewhere", outCA)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("certs issue: %w", err)
	case err != nil:
		if err := os.WriteFile(outCA, caPEM, 0o644); err != nil {
			return fmt.Errorf("certs issue: %w", err)
		}
	}
	return issueInto(outDir, ca, caKey, id, hosts)
}

// files returns the certificate and key file names of a role.
func files(role Role) (cert, key string) {
	if role == Client {
		return ClientFile, ClientKeyFile
	}
	return NodeFile, NodeKeyFile
}

func readCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("certs: read CA: %w", err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CAFile), filepath.Join(dir, CAKeyFile))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("certs: load CA from %s: %w", dir, err)
	}
	ca, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, nil, fmt.Errorf("certs: parse %s: %w", filepath.Join(dir, CAFile), err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || !ca.IsCA {
		return nil, nil, nil, fmt.Errorf("certs: %s is not a CA written by sift certs init", dir)
	}
	return ca, key, caPEM, nil
}

// issueInto writes id's certificate and key into dir.
func issueInto(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, id Identity, hosts []string) error {
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if id.Role == Node {
		hosts = append(append([]string(nil), DefaultHosts...), hosts...)
		usage = append(usage, x509.ExtKeyUsageServerAuth)
	} else {
		hosts = nil
	}
	cert, key, err := issue(ca, caKey, id, hosts, usage)
	if err != nil {
		return err
	}
	certFile, keyFile := files(id.Role)
	return writePair(dir, certFile, keyFile, cert, key)
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

// issue creates a certificate for id signed by the CA, for the given DNS
// names or IP addresses and uses.
func issue(ca *x509.Certificate, caKey *ecdsa.PrivateKey, id Identity, hosts []string, usage []x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cn := id.Name
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s key: %w", id, err)
	}
	tmpl := template(cn)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = usage
	tmpl.URIs = []*url.URL{identityURI(id)}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s certificate: %w", id, err)
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
