// Package buildinfo says which build of Sift is running: the module
// version, the VCS revision and time Go stamped into the binary, and the
// Go version. siftd --version, sift version and the sift_build_info
// metric print it.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Version can be set at link time (-ldflags "-X
// github.com/sift-pubsub/sift/internal/buildinfo.Version=v1.2.3"); by
// default it is the module version Go recorded ("(devel)" for a build
// from a checkout).
var Version = ""

// Info is a build's identity.
type Info struct {
	Version, Revision, Time, GoVersion string
	Modified                           bool
}

// Read returns the running binary's build information.
func Read() Info {
	in := Info{Version: Version, GoVersion: runtime.Version(), Revision: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if in.Version == "" {
			in.Version = "unknown"
		}
		return in
	}
	if in.Version == "" {
		in.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String renders the information on one line, e.g. "siftd (devel)
// revision 1a2b3c4 (modified) 2026-12-01T20:00:00Z go1.26".
func (in Info) String() string {
	s := fmt.Sprintf("%s revision %s", in.Version, in.Revision)
	if in.Modified {
		s += " (modified)"
	}
	if in.Time != "" {
		s += " " + in.Time
	}
	return s + " " + in.GoVersion
}

// Collector returns the sift_build_info gauge: always 1, labelled with
// the version, revision and Go version.
func Collector(in Info) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "sift_build_info",
		Help:        "Build of the running binary (always 1; the labels say which).",
		ConstLabels: prometheus.Labels{"version": in.Version, "revision": in.Revision, "goversion": in.GoVersion},
	})
	g.Set(1)
	return g
}
