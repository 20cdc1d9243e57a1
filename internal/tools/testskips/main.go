// Command testskips reads the output of `go test -json` on standard input,
// prints it as `go test` would (package results, and the whole output of
// every failing test), then lists every test that skipped itself.
//
// It exits non-zero when a test failed, when a package failed to build, or
// when a test skipped itself with a reason that no line of the allow file
// matches. CI uses it so that a test cannot switch itself off silently: a
// skip is acceptable only for a reason a reader can check (a missing tool,
// -short, not being root), and each such reason is listed in the allow file,
// one regular expression per line (blank lines and # comments ignored),
// matched against "PACKAGE TEST: REASON".
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func main() {
	allowPath := flag.String("allow", "", "file of regular expressions, one per line, for the skips that are allowed")
	flag.Parse()
	allow, err := readAllow(*allowPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testskips:", err)
		os.Exit(2)
	}
	bad, err := run(os.Stdin, os.Stdout, allow)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testskips:", err)
		os.Exit(2)
	}
	if bad {
		os.Exit(1)
	}
}

// readAllow reads the allow file; an empty path allows no skip.
func readAllow(path string) ([]*regexp.Regexp, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the allow file: %w", err)
	}
	var res []*regexp.Regexp
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		res = append(res, re)
	}
	return res, nil
}

// run copies the results to w and reports whether anything failed or
// skipped itself without an allowed reason.
func run(r io.Reader, w io.Writer, allow []*regexp.Regexp) (bool, error) {
	outputs := map[string][]string{} // package+test -> its output lines
	bad := false
	var skipped []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// go test prints build errors as plain text.
			fmt.Fprintln(w, sc.Text())
			bad = true
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			outputs[key] = append(outputs[key], e.Output)
			if e.Test == "" && !strings.HasPrefix(e.Output, "=== ") && !strings.HasPrefix(e.Output, "PASS") {
				fmt.Fprint(w, e.Output) // package lines: ok, FAIL, build output
			}
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "fail":
			bad = true
			if e.Test != "" {
				fmt.Fprint(w, strings.Join(outputs[key], ""))
			}
		case "skip":
			if e.Test == "" {
				break // a package without tests
			}
			reason := skipReason(outputs[key])
			line := fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason)
			if !allowed(line, allow) {
				bad = true
				line += "   <- not allowed"
			}
			skipped = append(skipped, line)
		case "pass":
			delete(outputs, key)
		}
	}
	if err := sc.Err(); err != nil {
		return true, fmt.Errorf("reading go test -json: %w", err)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped tests (%d):\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintln(w, "  "+s)
		}
	}
	return bad, nil
}

// skipReason is the text a test printed when it skipped: the lines after
// its "--- SKIP" line, or every line it printed when there is none.
func skipReason(lines []string) string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " | ")
}

func allowed(line string, allow []*regexp.Regexp) bool {
	for _, re := range allow {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}
