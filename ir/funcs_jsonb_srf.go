package ir

import (
	"github.com/streamsql/streamsql/types"
)

// The scalar functions behind the jsonb set-returning functions. The names
// are not valid unquoted identifiers, so users do not call them.
const (
	FnJSONBElements     = "$jsonb_elements"      // jsonb[]
	FnJSONBElementsText = "$jsonb_elements_text" // text[]
	FnJSONBKeys         = "$jsonb_keys"          // text[] (jsonb_object_keys)
	FnJSONBEachKeys     = "$jsonb_each_keys"     // text[]
	FnJSONBEachValues   = "$jsonb_each_values"   // jsonb[]
	FnJSONBEachText     = "$jsonb_each_text"     // text[]
	FnJSONBPathQuery    = "$jsonb_path_query"    // jsonb[]
)

func init() {
	j, txt := types.JSONBT, types.TextT
	def(FnJSONBElements, types.ArrayOf(j), j)
	def(FnJSONBElementsText, types.ArrayOf(txt), j)
	def(FnJSONBKeys, types.ArrayOf(txt), j)
	def(FnJSONBEachKeys, types.ArrayOf(txt), j)
	def(FnJSONBEachValues, types.ArrayOf(j), j)
	def(FnJSONBEachText, types.ArrayOf(txt), j)
	def(FnJSONBPathQuery, types.ArrayOf(j), j, txt)
}
