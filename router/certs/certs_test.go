package certs

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitLoadHandshake writes a folder, loads both roles and runs a TLS
// handshake between them over an in-memory pipe; a client from another
// deployment is refused.
func TestInitLoadHandshake(t *testing.T) {
	dir := t.TempDir()
	if err := Init(dir, []string{"router.example", "10.0.0.7"}); err != nil {
		t.Fatal(err)
	}
	if err := Init(dir, nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second init: %v, want a refusal", err)
	}
	info, err := os.Stat(filepath.Join(dir, NodeKeyFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("node key mode %v %v, want 0600", info.Mode(), err)
	}
	node, err := Load(dir, Node)
	if err != nil {
		t.Fatal(err)
	}
	client, err := Load(dir, Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(node, client, "router.example"); err != nil {
		t.Fatalf("same deployment: %v", err)
	}
	other := t.TempDir()
	if err := Init(other, nil); err != nil {
		t.Fatal(err)
	}
	stranger, err := Load(other, Client)
	if err != nil {
		t.Fatal(err)
	}
	stranger.CAs = client.CAs // trusts the router, but its own cert is foreign
	var rejected error
	cfg := node.ServerConfig(func(err error) { rejected = err })
	if err := handshakeWith(cfg, stranger.ClientConfig(), "localhost"); err == nil {
		t.Fatal("a client certificate from another CA was accepted")
	}
	if rejected == nil || !strings.Contains(rejected.Error(), "sift-client") {
		t.Fatalf("onReject got %v, want the refused certificate named", rejected)
	}
}

func handshake(node, client *Loaded, host string) error {
	return handshakeWith(node.ServerConfig(nil), client.ClientConfig(), host)
}

func handshakeWith(server, client *tls.Config, host string) error {
	client = client.Clone()
	client.ServerName = host
	c1, c2 := net.Pipe()
	errc := make(chan error, 1)
	go func() {
		s := tls.Server(c2, server)
		errc <- s.Handshake()
		s.Close()
	}()
	c := tls.Client(c1, client)
	err := c.Handshake()
	if err == nil {
		// TLS 1.3 clients finish before the server checks their
		// certificate; a read surfaces the server's verdict.
		_, err = c.Read(make([]byte, 1))
		if err != nil && strings.Contains(err.Error(), "EOF") {
			err = nil
		}
	}
	c.Close()
	if serr := <-errc; serr != nil {
		return serr
	}
	return err
}
