package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"

	"github.com/sift-pubsub/sift/internal/buildinfo"
)

// CurrentBuild names the running binary for the results it measures: the
// VCS revision Go stamped into it (with "(modified)" for a dirty tree) and
// the first bytes of the executable's SHA-256. The hash is the part that
// matters: two builds of one revision with different uncommitted changes
// share a revision but not a hash, and Go's reproducible builds give one
// source tree one hash, so a stored result is reused only by a binary
// that would measure the same code. "" when the executable cannot be read.
var CurrentBuild = sync.OnceValue(func() string {
	sum, err := executableSum()
	if err != nil {
		return ""
	}
	in := buildinfo.Read()
	rev := in.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if in.Modified {
		rev += " (modified)"
	}
	return rev + " exe " + sum
})

// executableSum returns the first 16 hex digits of the running
// executable's SHA-256.
func executableSum() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
