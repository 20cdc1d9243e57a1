package router

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/quic-go/quic-go"
)

// ResetKeyFile is the file in the data folder holding the QUIC
// stateless-reset key.
const ResetKeyFile = "stateless-reset.key"

// loadResetKey reads the stateless-reset key from dir, creating it (32
// random bytes, mode 0600, written atomically) on first use. Keeping it
// across restarts lets the router answer packets of connections it lost in
// a crash with a stateless reset, so peers notice at once rather than at
// the idle timeout.
func loadResetKey(dir string) (*quic.StatelessResetKey, error) {
	path := filepath.Join(dir, ResetKeyFile)
	var key quic.StatelessResetKey
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(data) != len(key) {
			return nil, fmt.Errorf("stateless-reset key %s: %d bytes, want %d", path, len(data), len(key))
		}
		copy(key[:], data)
		return &key, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("stateless-reset key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	rand.Read(key[:])
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, key[:], 0o600); err != nil {
		return nil, fmt.Errorf("stateless-reset key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("stateless-reset key: %w", err)
	}
	return &key, nil
}
