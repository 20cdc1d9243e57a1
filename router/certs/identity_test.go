package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIssueIdentities issues a router and a client folder from a CA-only
// folder and reads back the identities, file names and modes.
func TestIssueIdentities(t *testing.T) {
	ca := t.TempDir()
	if err := InitCA(ca); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ca, NodeFile)); err == nil {
		t.Fatal("InitCA wrote a node certificate")
	}
	r1 := filepath.Join(t.TempDir(), "r1")
	if err := Issue(ca, Identity{Node, "r1"}, []string{"r1.example", "10.1.0.1"}, r1); err != nil {
		t.Fatal(err)
	}
	alice := filepath.Join(t.TempDir(), "alice")
	if err := Issue(ca, Identity{Client, "alice"}, nil, alice); err != nil {
		t.Fatal(err)
	}
	for dir, names := range map[string][]string{r1: {CAFile, NodeFile, NodeKeyFile}, alice: {CAFile, ClientFile, ClientKeyFile}} {
		ents, _ := os.ReadDir(dir)
		if len(ents) != len(names) {
			t.Fatalf("%s holds %d files, want %v", dir, len(ents), names)
		}
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, CAKeyFile)); err == nil {
			t.Fatalf("%s holds the CA key", dir)
		}
	}
	if info, _ := os.Stat(filepath.Join(r1, NodeKeyFile)); info.Mode().Perm() != 0o600 {
		t.Fatalf("node key mode %v, want 0600", info.Mode())
	}
	node, err := Load(r1, Node)
	if err != nil {
		t.Fatal(err)
	}
	if node.Identity != (Identity{Node, "r1"}) || !node.Identity.Admits("r1") || node.Identity.Admits("r2") {
		t.Fatalf("router identity %v", node.Identity)
	}
	if !strings.Contains(strings.Join(node.Cert.Leaf.DNSNames, ","), "r1.example") {
		t.Fatalf("router DNS names %v", node.Cert.Leaf.DNSNames)
	}
	cl, err := Load(alice, Client)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Identity != (Identity{Client, "alice"}) || cl.Identity.Admits("alice") {
		t.Fatalf("client identity %v", cl.Identity)
	}
	if _, err := LoadPaths(Paths{CA: filepath.Join(alice, CAFile), Cert: filepath.Join(alice, ClientFile), Key: filepath.Join(alice, ClientKeyFile)}, Node); err == nil ||
		!strings.Contains(err.Error(), "is a client certificate, want a router certificate") {
		t.Fatalf("client certificate loaded as a router's: %v", err)
	}
	if err := handshake(node, cl, "r1.example"); err != nil {
		t.Fatalf("issued router and client: %v", err)
	}
	// The client checks that the server is a router: a client certificate
	// cannot serve (it also lacks the server use).
	if err := handshakeWith(cl.ServerConfig(nil), cl.ClientConfig(), "localhost"); err == nil {
		t.Fatal("a client certificate served as a router")
	}

	// Refusals write nothing.
	for _, tc := range []struct {
		id   Identity
		out  string
		want string
	}{
		{Identity{Node, "r1"}, r1, "already exists"},
		{Identity{Node, AnyRouter}, t.TempDir(), "development certificate only"},
		{Identity{Client, "a/b"}, t.TempDir(), "only letters"},
		{Identity{Client, ""}, t.TempDir(), "1 to 128"},
	} {
		if err := Issue(ca, tc.id, nil, tc.out); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Issue %v into %s: %v, want %q", tc.id, tc.out, err, tc.want)
		}
	}
	other := t.TempDir()
	if err := InitCA(other); err != nil {
		t.Fatal(err)
	}
	if err := Issue(other, Identity{Node, "r9"}, nil, alice); err == nil || !strings.Contains(err.Error(), "another CA") {
		t.Fatalf("issue into a folder of another CA: %v", err)
	}
	if _, err := os.Stat(filepath.Join(alice, NodeFile)); err == nil {
		t.Fatal(err)
	}
	if err := Issue(r1, Identity{Client, "bob"}, nil, t.TempDir()); err == nil {
		t.Fatal("issued from a folder without the CA key")
	}
}

// TestInitDevelopment: Init's router certificate names any router, its
// client certificate DevClientName.
func TestInitDevelopment(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir, nil); err != nil {
		t.Fatal(err)
	}
	node, err := Load(dir, Node)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := Load(dir, Client)
	if err != nil {
		t.Fatal(err)
	}
	if !node.Identity.Admits("r7") || cl.Identity != (Identity{Client, DevClientName}) {
		t.Fatalf("identities %v %v", node.Identity, cl.Identity)
	}
}

// TestNoIdentityRefused: a certificate of the right CA without a sift
// identity is refused by the router's TLS configuration.
func TestNoIdentityRefused(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir, nil); err != nil {
		t.Fatal(err)
	}
	ca, caKey, _, err := readCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := template("legacy")
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	node, _ := Load(dir, Node)
	cl, _ := Load(dir, Client)
	legacy := &Loaded{CAs: cl.CAs, Cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}
	var rejected error
	if err := handshakeWith(node.ServerConfig(func(err error) { rejected = err }), legacy.ClientConfig(), "localhost"); err == nil {
		t.Fatal("a certificate without identity was accepted")
	}
	if rejected == nil || !strings.Contains(rejected.Error(), "names no sift role") {
		t.Fatalf("onReject got %v", rejected)
	}
}

// TestStoreReloadRotation rotates the CA under a Store: after Reload a
// client of the old CA is refused and one of the new CA accepted; a
// reload naming another router, or of a broken file, keeps the old
// certificates.
func TestStoreReloadRotation(t *testing.T) {
	ca1, ca2 := t.TempDir(), t.TempDir()
	for _, d := range []string{ca1, ca2} {
		if err := InitCA(d); err != nil {
			t.Fatal(err)
		}
	}
	r1 := t.TempDir()
	if err := Issue(ca1, Identity{Node, "r1"}, nil, r1); err != nil {
		t.Fatal(err)
	}
	old, fresh := t.TempDir(), t.TempDir()
	if err := Issue(ca1, Identity{Client, "old"}, nil, old); err != nil {
		t.Fatal(err)
	}
	if err := Issue(ca2, Identity{Client, "fresh"}, nil, fresh); err != nil {
		t.Fatal(err)
	}
	st, err := Open(FolderPaths(r1, Node), Node)
	if err != nil {
		t.Fatal(err)
	}
	server := st.ServerConfig(nil)
	oldCl, _ := Load(old, Client)
	freshCl, _ := Load(fresh, Client)
	freshCl.CAs = oldCl.CAs // trusts the router's current (old) CA
	if err := handshakeWith(server, oldCl.ClientConfig(), "localhost"); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	if err := handshakeWith(server, freshCl.ClientConfig(), "localhost"); err == nil {
		t.Fatal("before rotation: a client of the new CA was accepted")
	}
	// Rotate: r1 gets a certificate of the new CA and trusts only it.
	rotated := t.TempDir()
	if err := Issue(ca2, Identity{Node, "r1"}, nil, rotated); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{CAFile, NodeFile, NodeKeyFile} {
		copyFile(t, filepath.Join(rotated, n), filepath.Join(r1, n))
	}
	if err := st.Reload(); err != nil {
		t.Fatal(err)
	}
	freshCl, _ = Load(fresh, Client)
	if err := handshakeWith(server, freshCl.ClientConfig(), "localhost"); err != nil {
		t.Fatalf("after rotation, new CA: %v", err)
	}
	oldCl.CAs = freshCl.CAs
	if err := handshakeWith(server, oldCl.ClientConfig(), "localhost"); err == nil {
		t.Fatal("after rotation: a client of the old CA was accepted")
	}
	// Another router's certificate, then a broken key: not reloaded.
	r2 := t.TempDir()
	if err := Issue(ca2, Identity{Node, "r2"}, nil, r2); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(r2, NodeFile), filepath.Join(r1, NodeFile))
	copyFile(t, filepath.Join(r2, NodeKeyFile), filepath.Join(r1, NodeKeyFile))
	if err := st.Reload(); err == nil || !strings.Contains(err.Error(), "not reloaded") {
		t.Fatalf("reload of another router's certificate: %v", err)
	}
	os.WriteFile(filepath.Join(r1, NodeKeyFile), []byte("garbage"), 0o600)
	if err := st.Reload(); err == nil {
		t.Fatal("reload of a broken key succeeded")
	}
	if st.Identity() != (Identity{Node, "r1"}) {
		t.Fatalf("identity after refused reloads: %v", st.Identity())
	}
	if err := handshakeWith(server, freshCl.ClientConfig(), "localhost"); err != nil {
		t.Fatalf("after refused reloads: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
