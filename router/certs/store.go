package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync/atomic"
)

// Store holds a role's certificates and reloads them from their files on
// demand (siftd calls Reload on SIGHUP). The tls.Configs it returns read
// the current certificates at every handshake, so a reload changes what
// new connections present and accept without touching open ones.
type Store struct {
	paths Paths
	role  Role
	cur   atomic.Pointer[Loaded]
}

// Open loads role's files at p into a new Store.
func Open(p Paths, role Role) (*Store, error) {
	l, err := LoadPaths(p, role)
	if err != nil {
		return nil, err
	}
	s := &Store{paths: p, role: role}
	s.cur.Store(l)
	return s, nil
}

// Reload reads the files again. On any error the Store keeps what it
// had. A router certificate whose name changed is refused: a router's
// name is fixed for its run.
func (s *Store) Reload() error {
	l, err := LoadPaths(s.paths, s.role)
	if err != nil {
		return err
	}
	if old := s.cur.Load(); old.Identity != l.Identity && s.role == Node {
		return fmt.Errorf("certs: %s names %s, the running router is %s; not reloaded", s.paths.Cert, l.Identity, old.Identity)
	}
	s.cur.Store(l)
	return nil
}

// Current returns the certificates in use.
func (s *Store) Current() *Loaded { return s.cur.Load() }

// Identity returns the identity of the current certificate.
func (s *Store) Identity() Identity { return s.cur.Load().Identity }

// VerifyPeer checks the certificate chain a peer presented on an open
// connection against the current CA bundle (for any use: a link's peer
// may have been the client or the server), and that it carries an
// identity; router.Revalidate uses it after a reload.
func (s *Store) VerifyPeer(cs tls.ConnectionState) error {
	raw := make([][]byte, len(cs.PeerCertificates))
	for i, c := range cs.PeerCertificates {
		raw[i] = c.Raw
	}
	_, err := verifyChain(raw, s.cur.Load().CAs, x509.ExtKeyUsageAny, "", "peer")
	return err
}

// ServerConfig is Loaded.ServerConfig over the current certificates.
func (s *Store) ServerConfig(onReject func(error)) *tls.Config {
	return serverConfig(s.cur.Load, onReject)
}

// ClientConfig is Loaded.ClientConfig over the current certificates.
func (s *Store) ClientConfig() *tls.Config { return clientConfig(s.cur.Load) }
