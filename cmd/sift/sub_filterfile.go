package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// readFilterFile reads the one filter of sift sub --filter-file, for
// filters too long or too awkward to quote on a command line. The text
// is checked by the router like any filter (a parse error names the
// column).
func readFilterFile(opts subOptions) (string, error) {
	if opts.filters != "" {
		return "", errors.New("--filter-file and --filters exclude each other")
	}
	b, err := os.ReadFile(opts.filterFile)
	if err != nil {
		return "", fmt.Errorf("--filter-file: %w", err)
	}
	f := strings.TrimSpace(string(b))
	if f == "" {
		return "", fmt.Errorf("--filter-file %s is empty (use * to match every event)", opts.filterFile)
	}
	return f, nil
}
