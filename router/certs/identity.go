package certs

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// AnyRouter is the name in the development router certificate Init
// writes: it may link under any router name. Certificates issued for a
// deployment (Issue) name one router each.
const AnyRouter = "*"

// uriScheme is the scheme of the URI subject alternative name that
// carries a certificate's role and name: sift://router/NAME or
// sift://client/NAME.
const uriScheme = "sift"

// Identity is what a certificate says its holder is: a router or a
// client, and its name.
type Identity struct {
	Role Role
	Name string
}

// String renders the identity as "router r1" or "client alice".
func (id Identity) String() string { return id.Role.String() + " " + id.Name }

// String returns "router" or "client".
func (r Role) String() string {
	if r == Client {
		return "client"
	}
	return "router"
}

// Admits reports whether a router certificate of this identity may link
// under the router name name (the name in its LinkHello): the names are
// equal, or the certificate is Init's development certificate.
func (id Identity) Admits(name string) bool {
	return id.Role == Node && (id.Name == name || id.Name == AnyRouter)
}

// ErrNoIdentity means a certificate carries no sift://ROLE/NAME URI: it
// was not written by this version of sift certs.
var ErrNoIdentity = errors.New("certificate names no sift role (reissue it with sift certs issue)")

// IdentityOf reads the role and name a certificate carries in its
// sift://ROLE/NAME URI subject alternative name.
func IdentityOf(c *x509.Certificate) (Identity, error) {
	var found []Identity
	for _, u := range c.URIs {
		if u.Scheme != uriScheme {
			continue
		}
		id, err := parseIdentityURI(u)
		if err != nil {
			return Identity{}, fmt.Errorf("certificate %q: %w", c.Subject.CommonName, err)
		}
		found = append(found, id)
	}
	switch len(found) {
	case 0:
		return Identity{}, fmt.Errorf("certificate %q: %w", c.Subject.CommonName, ErrNoIdentity)
	case 1:
		return found[0], nil
	}
	return Identity{}, fmt.Errorf("certificate %q carries %d sift identities, want one", c.Subject.CommonName, len(found))
}

func parseIdentityURI(u *url.URL) (Identity, error) {
	var id Identity
	switch u.Host {
	case "router":
		id.Role = Node
	case "client":
		id.Role = Client
	default:
		return id, fmt.Errorf("sift URI %q: role %q is neither router nor client", u, u.Host)
	}
	id.Name = strings.TrimPrefix(u.Path, "/")
	if err := checkName(id); err != nil {
		return id, fmt.Errorf("sift URI %q: %w", u, err)
	}
	return id, nil
}

// identityURI is the URI subject alternative name of id.
func identityURI(id Identity) *url.URL {
	return &url.URL{Scheme: uriScheme, Host: id.Role.String(), Path: "/" + id.Name}
}

// checkName validates a router or client name: 1 to 128 characters of
// letters, digits, '.', '_' and '-' (AnyRouter only for routers).
func checkName(id Identity) error {
	if id.Role == Node && id.Name == AnyRouter {
		return nil
	}
	if id.Name == "" || len(id.Name) > 128 {
		return fmt.Errorf("%s name %q must have 1 to 128 characters", id.Role, id.Name)
	}
	for _, r := range id.Name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("%s name %q: only letters, digits, '.', '_' and '-' are allowed", id.Role, id.Name)
		}
	}
	return nil
}
