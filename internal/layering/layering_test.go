// Package layering holds a test that enforces the direction of imports
// between streamsql's packages (docs/architecture.md).
package layering

import (
	"go/ast"
	"go/build/constraint"
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
	"ir":        {"types", "sqlerr", "catalog"},
	"sql":       {"types", "sqlerr", "catalog", "ir"},
	"planner":   {"types", "sqlerr", "catalog", "ir"},
	"exec/eval": {"types", "sqlerr", "ir"},
	"exec":      {"types", "sqlerr", "catalog", "ir", "planner", "barrier", "state", "exec/eval", "memlimit"},
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

// parserFree lists the packages that must build without cgo: neither they
// nor anything they import (transitively) may import the parser, so package
// sql is out of their reach too. Their test files may use the parser (to
// plan queries from SQL text) only behind a cgo build constraint.
var parserFree = []string{"ir", "planner", "exec/eval", "exec"}

const parserPath = "github.com/pganalyze/pg_query_go"

func TestParserFreePackages(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{} // package -> imports of its non-test files
	var load func(pkg string) []string
	load = func(pkg string) []string {
		if imps, ok := imports[pkg]; ok {
			return imps
		}
		imports[pkg] = nil
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		seen := map[string]bool{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, imp := range parseImports(t, f).Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if !seen[path] {
					seen[path] = true
					imports[pkg] = append(imports[pkg], path)
				}
			}
		}
		sort.Strings(imports[pkg])
		return imports[pkg]
	}
	// reach returns a chain of imports from pkg to the parser, or nil.
	var reach func(pkg string, seen map[string]bool) []string
	reach = func(pkg string, seen map[string]bool) []string {
		if seen[pkg] {
			return nil
		}
		seen[pkg] = true
		for _, path := range load(pkg) {
			if strings.HasPrefix(path, parserPath) || path == "C" {
				return []string{pkg, path}
			}
			if strings.HasPrefix(path, module) {
				if chain := reach(strings.TrimPrefix(path, module), seen); chain != nil {
					return append([]string{pkg}, chain...)
				}
			}
		}
		return nil
	}
	for _, pkg := range parserFree {
		if chain := reach(pkg, map[string]bool{}); chain != nil {
			t.Errorf("%s must build without the parser, but imports it: %s", pkg, strings.Join(chain, " -> "))
		}
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
		for _, f := range files {
			parsed := parseImports(t, f)
			for _, imp := range parsed.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				needsParser := strings.HasPrefix(path, parserPath) ||
					strings.HasPrefix(path, module) && reach(strings.TrimPrefix(path, module), map[string]bool{}) != nil
				if needsParser && !requiresCgo(parsed) {
					t.Errorf("%s/%s imports %s, which needs the parser: add //go:build cgo", pkg, filepath.Base(f), path)
					break
				}
			}
		}
	}
}

func parseImports(t *testing.T, path string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// requiresCgo reports whether the file's build constraint holds only with cgo.
func requiresCgo(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			return !expr.Eval(func(tag string) bool { return tag != "cgo" })
		}
	}
	return false
}
