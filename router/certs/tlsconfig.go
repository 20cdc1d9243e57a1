package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ALPN is the application protocol Sift negotiates in TLS.
const ALPN = "sift/1"

// Role selects which certificate of a folder to present.
type Role int

// The roles: a node (router) presents node.pem, a client client.pem.
const (
	Node Role = iota
	Client
)

// Paths names the three files a role loads: the CA bundle it trusts, its
// certificate and its key. A folder's are FolderPaths; explicit paths
// let a router read, say, the tls.crt, tls.key and ca.crt cert-manager
// writes.
type Paths struct {
	CA, Cert, Key string
}

// FolderPaths returns the paths of role's files in a certificates folder:
// ca.pem with node.pem and node-key.pem, or with client.pem and
// client-key.pem.
func FolderPaths(dir string, role Role) Paths {
	cert, key := files(role)
	return Paths{CA: filepath.Join(dir, CAFile), Cert: filepath.Join(dir, cert), Key: filepath.Join(dir, key)}
}

// Loaded is a role's CA bundle, certificate and key read into memory,
// with the identity the certificate carries.
type Loaded struct {
	CAs      *x509.CertPool
	Cert     tls.Certificate
	Identity Identity
}

// Load reads the CA and the role's certificate and key from dir.
func Load(dir string, role Role) (*Loaded, error) {
	return LoadPaths(FolderPaths(dir, role), role)
}

// LoadPaths reads the CA bundle, certificate and key at p and checks that
// the certificate carries an identity of role and chains to the bundle.
func LoadPaths(p Paths, role Role) (*Loaded, error) {
	caPEM, err := os.ReadFile(p.CA)
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("certs: %s holds no PEM certificate", p.CA)
	}
	cert, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		return nil, fmt.Errorf("certs: load %s: %w", p.Cert, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("certs: parse %s: %w", p.Cert, err)
	}
	id, err := IdentityOf(leaf)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", p.Cert, err)
	}
	if id.Role != role {
		return nil, fmt.Errorf("certs: %s is a %s certificate, want a %s certificate", p.Cert, id.Role, role)
	}
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("certs: %s does not chain to %s: %w", p.Cert, p.CA, err)
	}
	cert.Leaf = leaf
	return &Loaded{CAs: pool, Cert: cert, Identity: id}, nil
}

// ServerConfig returns the TLS configuration of a router accepting
// connections: TLS 1.3, ALPN sift/1, and a client certificate that must
// chain to the deployment CA and carry an identity (which role may do
// what is the router's decision, router/conn.go). onReject, if not nil,
// is told why a peer's certificate was refused (for a log line).
func (l *Loaded) ServerConfig(onReject func(error)) *tls.Config {
	return serverConfig(func() *Loaded { return l }, onReject)
}

// ClientConfig returns the TLS configuration of a client (or a router
// dialling a peer): TLS 1.3, ALPN sift/1, presenting this certificate
// and verifying the router's against the deployment CA; the router's
// certificate must be a router certificate.
func (l *Loaded) ClientConfig() *tls.Config {
	return clientConfig(func() *Loaded { return l })
}

func serverConfig(cur func() *Loaded, onReject func(error)) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		NextProtos: []string{ALPN},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			c := cur().Cert
			return &c, nil
		},
		// RequireAnyClientCert plus our own verification, so that a refused
		// certificate can be logged and the current CA bundle used; the
		// check is as strict as RequireAndVerifyClientCert.
		ClientAuth: tls.RequireAnyClientCert,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			_, err := verifyChain(raw, cur().CAs, x509.ExtKeyUsageClientAuth, "", "client")
			if err != nil && onReject != nil {
				onReject(err)
			}
			return err
		},
	}
}

func clientConfig(cur func() *Loaded) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		NextProtos: []string{ALPN},
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			c := cur().Cert
			return &c, nil
		},
		// The standard verification reads a fixed RootCAs; VerifyConnection
		// does the same checks (chain, host name, server use) against the
		// current bundle, and requires a router certificate.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			raw := make([][]byte, len(cs.PeerCertificates))
			for i, c := range cs.PeerCertificates {
				raw[i] = c.Raw
			}
			id, err := verifyChain(raw, cur().CAs, x509.ExtKeyUsageServerAuth, cs.ServerName, "router")
			if err == nil && id.Role != Node {
				err = fmt.Errorf("router certificate %q is a %s certificate", id.Name, id.Role)
			}
			return err
		},
	}
}

// verifyChain checks that raw (leaf first) chains to roots for usage (and
// host, if not empty) and that the leaf carries an identity, which it
// returns. who names the peer in errors.
func verifyChain(raw [][]byte, roots *x509.CertPool, usage x509.ExtKeyUsage, host, who string) (Identity, error) {
	if len(raw) == 0 {
		return Identity{}, fmt.Errorf("no %s certificate", who)
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, der := range raw {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return Identity{}, fmt.Errorf("%s certificate: %w", who, err)
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	_, err := certs[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		DNSName:       host,
		KeyUsages:     []x509.ExtKeyUsage{usage},
	})
	if err != nil {
		return Identity{}, fmt.Errorf("%s certificate %q: %w", who, certs[0].Subject.CommonName, err)
	}
	return IdentityOf(certs[0])
}

// PeerName returns the common name of the certificate a peer presented, or
// "" if none.
func PeerName(cs tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return ""
	}
	return cs.PeerCertificates[0].Subject.CommonName
}

// PeerIdentity returns the identity the peer's certificate carries; the
// handshake already verified the certificate.
func PeerIdentity(cs tls.ConnectionState) (Identity, error) {
	if len(cs.PeerCertificates) == 0 {
		return Identity{}, errors.New("the peer presented no certificate")
	}
	return IdentityOf(cs.PeerCertificates[0])
}
