package pgwire

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports checks that pgwire knows nothing of the engine: of streamsql's
// packages it imports only types and sqlerr.
func TestImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/streamsql/streamsql/"
	for _, imp := range pkg.Imports {
		if rest, ok := strings.CutPrefix(imp, module); ok && rest != "types" && rest != "sqlerr" {
			t.Errorf("pgwire imports %s", imp)
		}
	}
}
