package ir

import "github.com/streamsql/streamsql/types"

// The jsonb functions and the functions behind the jsonb operators, named as
// PostgreSQL names them (jsonb_object_field is ->, and so on).
const (
	FnJSONBField        = "jsonb_object_field"         // jsonb -> text
	FnJSONBElem         = "jsonb_array_element"        // jsonb -> int
	FnJSONBFieldText    = "jsonb_object_field_text"    // jsonb ->> text
	FnJSONBElemText     = "jsonb_array_element_text"   // jsonb ->> int
	FnJSONBPath         = "jsonb_extract_path_op"      // jsonb #> text[]
	FnJSONBPathText     = "jsonb_extract_path_text_op" // jsonb #>> text[]
	FnJSONBContains     = "jsonb_contains"             // @>
	FnJSONBContained    = "jsonb_contained"            // <@
	FnJSONBExists       = "jsonb_exists"               // ?
	FnJSONBExistsAny    = "jsonb_exists_any"           // ?|
	FnJSONBExistsAll    = "jsonb_exists_all"           // ?&
	FnJSONBConcat       = "jsonb_concat"               // ||
	FnJSONBDelete       = "jsonb_delete"               // - text, - int, - text[]
	FnJSONBDeletePath   = "jsonb_delete_path"          // #-
	FnJSONBBuildObject  = "jsonb_build_object"
	FnJSONBBuildArray   = "jsonb_build_array"
	FnToJSONB           = "to_jsonb"
	FnJSONBPathQueryArr = "jsonb_path_query_array"
)

// JSONBPolyFunctions take arguments of any type (PostgreSQL's "any" and
// anyelement): the binder types their calls (bindJSONBPolyCall) and the
// evaluator's kernel for them is made from the argument types.
var JSONBPolyFunctions = map[string]bool{
	FnJSONBBuildObject: true, FnJSONBBuildArray: true, FnToJSONB: true,
}

// IsJSONBPolyFunction reports whether fn is typed by the binder from its
// arguments rather than by the overload table.
func IsJSONBPolyFunction(fn string) bool { return JSONBPolyFunctions[fn] }

func init() {
	j, txt, i4, b := types.JSONBT, types.TextT, types.Int32T, types.BoolT
	textArr := types.ArrayOf(txt)
	def(FnJSONBField, j, j, txt)
	def(FnJSONBElem, j, j, i4)
	def(FnJSONBFieldText, txt, j, txt)
	def(FnJSONBElemText, txt, j, i4)
	def(FnJSONBPath, j, j, textArr)
	def(FnJSONBPathText, txt, j, textArr)
	def(FnJSONBContains, b, j, j)
	def(FnJSONBContained, b, j, j)
	def(FnJSONBExists, b, j, txt)
	def(FnJSONBExistsAny, b, j, textArr)
	def(FnJSONBExistsAll, b, j, textArr)
	def(FnJSONBConcat, j, j, j)
	def(FnJSONBDelete, j, j, txt)
	def(FnJSONBDelete, j, j, i4)
	def(FnJSONBDelete, j, j, textArr)
	def(FnJSONBDeletePath, j, j, textArr)
	def("jsonb_typeof", txt, j)
	def("jsonb_array_length", i4, j)
	def("jsonb_strip_nulls", j, j)
	def("jsonb_pretty", txt, j)
	def("jsonb_set", j, j, textArr, j)
	def("jsonb_set", j, j, textArr, j, b)
	def("jsonb_insert", j, j, textArr, j)
	def("jsonb_insert", j, j, textArr, j, b)
	ep := def("jsonb_extract_path", j, j, txt)
	ep.Variadic = true
	ept := def("jsonb_extract_path_text", txt, j, txt)
	ept.Variadic = true
	def("jsonb_path_query_first", j, j, txt)
	def("jsonb_path_exists", b, j, txt)
	def(FnJSONBPathQueryArr, j, j, txt)
}
