package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag: --drain-timeout
// is SIFT_DRAIN_TIMEOUT. A flag given on the command line wins over its
// variable, which wins over the --config file.
const envPrefix = "SIFT_"

// envName returns the environment variable of a flag.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its SIFT_*
// variable, if set (repeatable flags take a comma-separated list), so
// that the rest of siftd sees it as given.
func applyEnv(f *pflag.FlagSet, lookup func(string) (string, bool)) error {
	var err error
	f.VisitAll(func(fl *pflag.Flag) {
		if err != nil || fl.Changed || fl.Name == "help" || fl.Name == "version" {
			return
		}
		v, ok := lookup(envName(fl.Name))
		if !ok {
			return
		}
		vals := []string{v}
		if strings.HasSuffix(fl.Value.Type(), "Array") || strings.HasSuffix(fl.Value.Type(), "Slice") {
			vals = strings.Split(v, ",")
		}
		for _, one := range vals {
			if e := f.Set(fl.Name, strings.TrimSpace(one)); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(fl.Name), v, e)
				return
			}
		}
	})
	return err
}

// newLogger returns siftd's logger: text or JSON lines on w, at the level
// held by level (SIGHUP may change it).
func newLogger(w io.Writer, format string, level *slog.LevelVar) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// parseLevel reads a --log-level: debug, info, warn or error.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if s == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// stderr is where siftd logs; a variable for tests.
var stderr io.Writer = os.Stderr
