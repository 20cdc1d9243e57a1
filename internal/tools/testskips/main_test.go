package main

import (
	"regexp"
	"strings"
	"testing"
)

const stream = `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: needs root\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: known bug\n"}
{"Action":"skip","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}
{"Action":"pass","Package":"p"}
`

func TestSkipsAllowedAndNot(t *testing.T) {
	var out strings.Builder
	bad, err := run(strings.NewReader(stream), &out, []*regexp.Regexp{regexp.MustCompile(`needs root`)})
	if err != nil {
		t.Fatal(err)
	}
	if !bad {
		t.Fatalf("a skip for a known bug passed:\n%s", out.String())
	}
	got := out.String()
	if !strings.Contains(got, "p TestA: a_test.go:9: needs root\n") || !strings.Contains(got, "p TestB: b_test.go:3: known bug   <- not allowed") {
		t.Fatalf("report:\n%s", got)
	}
	if !strings.Contains(got, "ok  \tp\t0.1s") {
		t.Fatalf("package line missing:\n%s", got)
	}
}

func TestFailurePrintsOutput(t *testing.T) {
	const s = `{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:5: got 1, want 2\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}
{"Action":"fail","Package":"p"}
`
	var out strings.Builder
	bad, err := run(strings.NewReader(s), &out, nil)
	if err != nil || !bad || !strings.Contains(out.String(), "got 1, want 2") {
		t.Fatalf("bad=%v err=%v out:\n%s", bad, err, out.String())
	}
}

func TestBuildErrorIsBad(t *testing.T) {
	var out strings.Builder
	bad, _ := run(strings.NewReader("# p\n./x.go:1:1: syntax error\n"), &out, nil)
	if !bad || !strings.Contains(out.String(), "syntax error") {
		t.Fatalf("bad=%v out:\n%s", bad, out.String())
	}
}
