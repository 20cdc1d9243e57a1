package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPure checks the package's promise: no goroutines, no clock, no I/O.
// Its non-test files import no network, file system or QUIC package, start
// no goroutine and call none of time's clock or timer functions.
func TestPure(t *testing.T) {
	banned := map[string]bool{"net": true, "os": true, "io/fs": true, "syscall": true, "sync": true, "math/rand": true, "math/rand/v2": true}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files++
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if banned[p] || strings.HasPrefix(p, "net/") || strings.Contains(p, "quic-go") {
				t.Errorf("%s imports %s", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement at %s", name, fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && clock[n.Sel.Name] {
					t.Errorf("%s: time.%s at %s", name, n.Sel.Name, fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	if files == 0 {
		t.Fatal("no source files read")
	}
}
