package wire

import (
	"encoding/binary"
	"fmt"
)

// Role says what kind of peer sent a Hello.
type Role byte

// The roles. Routers linking into a mesh say RoleRouter.
const (
	RoleClient Role = 1
	RoleRouter Role = 2
)

// String returns "client" or "router".
func (r Role) String() string {
	switch r {
	case RoleClient:
		return "client"
	case RoleRouter:
		return "router"
	}
	return fmt.Sprintf("role-%d", byte(r))
}

// MaxNameLen bounds peer names in Hello and Welcome.
const MaxNameLen = 255

// Hello opens a control stream: the sender's range of protocol versions,
// its role and its name.
type Hello struct {
	MinVersion, MaxVersion uint64
	Role                   Role
	Name                   string
}

// Type returns TypeHello.
func (*Hello) Type() Type { return TypeHello }

// AppendBody appends min, max (varints), role (byte), name (string).
func (m *Hello) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.MinVersion)
	b = binary.AppendUvarint(b, m.MaxVersion)
	b = append(b, byte(m.Role))
	return appendString(b, m.Name)
}

func decodeHello(r *reader) *Hello {
	m := &Hello{MinVersion: r.uvarint("hello min version"), MaxVersion: r.uvarint("hello max version")}
	m.Role = Role(r.byte("hello role"))
	m.Name = r.utf8String("hello name")
	switch {
	case r.err != nil:
	case m.MinVersion == 0 || m.MinVersion > m.MaxVersion:
		r.fail("hello: invalid version range %d-%d", m.MinVersion, m.MaxVersion)
	case m.Role != RoleClient && m.Role != RoleRouter:
		r.fail("hello: unknown role %d", byte(m.Role))
	case len(m.Name) > MaxNameLen:
		r.fail("hello: name of %d bytes exceeds %d", len(m.Name), MaxNameLen)
	}
	return m
}

// Negotiate picks the highest version in both [lo, hi] and the peer's
// Hello range, or returns a CodeVersion error naming both ranges.
func Negotiate(h *Hello, lo, hi uint64) (uint64, error) {
	v := min(hi, h.MaxVersion)
	if v < max(lo, h.MinVersion) {
		return 0, Errorf(CodeVersion, "peer speaks protocol versions %d-%d, this side %d-%d", h.MinVersion, h.MaxVersion, lo, hi)
	}
	return v, nil
}

// NegotiateLink picks the link version of a peer's LinkHello against this
// side's range [Version, hi] (hi is LinkVersion unless the router was
// told to announce less), or returns a CodeVersion error naming both.
func NegotiateLink(h *LinkHello, hi uint64) (uint64, error) {
	return Negotiate(&Hello{MinVersion: h.MinVersion, MaxVersion: h.MaxVersion}, Version, hi)
}

// Welcome answers a Hello: the chosen version, the router's name and the
// limits it enforces on this connection.
type Welcome struct {
	Version          uint64
	Name             string
	MaxFrame         uint64
	MaxSubscriptions uint64
}

// Type returns TypeWelcome.
func (*Welcome) Type() Type { return TypeWelcome }

// AppendBody appends version, name, max frame and max subscriptions.
func (m *Welcome) AppendBody(b []byte) []byte {
	b = binary.AppendUvarint(b, m.Version)
	b = appendString(b, m.Name)
	b = binary.AppendUvarint(b, m.MaxFrame)
	return binary.AppendUvarint(b, m.MaxSubscriptions)
}

func decodeWelcome(r *reader) *Welcome {
	m := &Welcome{Version: r.uvarint("welcome version"), Name: r.utf8String("welcome name")}
	m.MaxFrame = r.uvarint("welcome max frame")
	m.MaxSubscriptions = r.uvarint("welcome max subscriptions")
	if r.err == nil && len(m.Name) > MaxNameLen {
		r.fail("welcome: name of %d bytes exceeds %d", len(m.Name), MaxNameLen)
	}
	return m
}

// Attach is the first frame of a data stream; it repeats the negotiated
// version.
type Attach struct {
	Version uint64
}

// Type returns TypeAttach.
func (*Attach) Type() Type { return TypeAttach }

// AppendBody appends the version.
func (m *Attach) AppendBody(b []byte) []byte { return binary.AppendUvarint(b, m.Version) }

func decodeAttach(r *reader) *Attach { return &Attach{Version: r.uvarint("attach version")} }
