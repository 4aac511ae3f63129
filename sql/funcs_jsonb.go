package sql

import (
	"github.com/streamsql/streamsql/ir"
)

// jsonbOperators maps each jsonb operator to its function.
var jsonbOperators = map[string]string{
	"->": ir.FnJSONBField, "->>": ir.FnJSONBFieldText, "#>": ir.FnJSONBPath, "#>>": ir.FnJSONBPathText,
	"@>": ir.FnJSONBContains, "<@": ir.FnJSONBContained, "?": ir.FnJSONBExists, "?|": ir.FnJSONBExistsAny,
	"?&": ir.FnJSONBExistsAll, "||": ir.FnJSONBConcat, "-": ir.FnJSONBDelete, "#-": ir.FnJSONBDeletePath,
}

// JSONBPolyFunctionNames returns the names IsJSONBPolyFunction accepts.
func JSONBPolyFunctionNames() []string {
	var names []string
	for n := range ir.JSONBPolyFunctions {
		names = append(names, n)
	}
	return names
}
