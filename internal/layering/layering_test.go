// Package layering holds a test that enforces the direction of imports
// between streamsql's packages (docs/architecture.md).
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/streamsql/streamsql/"

// allowed lists, for each package, the streamsql packages its non-test files
// may import. Packages not listed may import anything.
var allowed = map[string][]string{
	"sqlerr":    {},
	"types":     {"sqlerr"},
	"barrier":   {},
	"catalog":   {"types"},
	"state":     {"types", "sqlerr"},
	"sql":       {"types", "sqlerr", "catalog"},
	"planner":   {"types", "sqlerr", "catalog", "sql"},
	"exec/eval": {"types", "sqlerr", "sql"},
	"exec":      {"types", "sqlerr", "catalog", "sql", "planner", "barrier", "state", "exec/eval", "memlimit"},
	"memlimit":  {},
	"pgwire":    {"types", "sqlerr"},
	"slt":       {},
}

func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for p := range allowed {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		ok := map[string]bool{}
		for _, a := range allowed[pkg] {
			ok[a] = true
		}
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("package %s has no Go files", pkg)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if !strings.HasPrefix(path, module) {
					continue
				}
				dep := strings.TrimPrefix(path, module)
				if !ok[dep] {
					t.Errorf("%s imports %s; %s may import only %v", filepath.Base(f), dep, pkg, allowed[pkg])
				}
			}
		}
	}
}
