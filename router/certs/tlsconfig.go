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

// Loaded is a certificates folder read into memory.
type Loaded struct {
	CAs  *x509.CertPool
	Cert tls.Certificate
}

// Load reads the CA and the role's certificate and key from dir.
func Load(dir string, role Role) (*Loaded, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("certs: %s holds no PEM certificate", filepath.Join(dir, CAFile))
	}
	certFile, keyFile := NodeFile, NodeKeyFile
	if role == Client {
		certFile, keyFile = ClientFile, ClientKeyFile
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
	if err != nil {
		return nil, fmt.Errorf("certs: load %s: %w", filepath.Join(dir, certFile), err)
	}
	return &Loaded{CAs: pool, Cert: cert}, nil
}

// ServerConfig returns the TLS configuration of a router accepting
// connections: TLS 1.3, ALPN sift/1, and a client certificate that must
// chain to the deployment CA. onReject, if not nil, is told why a peer's
// certificate was refused (for a log line).
func (l *Loaded) ServerConfig(onReject func(error)) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		NextProtos:   []string{ALPN},
		Certificates: []tls.Certificate{l.Cert},
		// RequireAnyClientCert plus our own verification, so that a refused
		// certificate can be logged; the check is as strict as
		// RequireAndVerifyClientCert.
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: l.verifyClient(onReject),
	}
}

func (l *Loaded) verifyClient(onReject func(error)) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		err := verifyChain(raw, l.CAs)
		if err != nil && onReject != nil {
			onReject(err)
		}
		return err
	}
}

func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("no client certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, der := range raw {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return fmt.Errorf("client certificate: %w", err)
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
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return fmt.Errorf("client certificate %q: %w", certs[0].Subject.CommonName, err)
	}
	return nil
}

// ClientConfig returns the TLS configuration of a client (or a router
// dialling a peer): TLS 1.3, ALPN sift/1, presenting this folder's
// certificate and verifying the router's against the deployment CA.
func (l *Loaded) ClientConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		NextProtos:   []string{ALPN},
		Certificates: []tls.Certificate{l.Cert},
		RootCAs:      l.CAs,
	}
}

// PeerName returns the common name of the certificate a peer presented, or
// "" if none.
func PeerName(cs tls.ConnectionState) string {
	if len(cs.PeerCertificates) == 0 {
		return ""
	}
	return cs.PeerCertificates[0].Subject.CommonName
}
