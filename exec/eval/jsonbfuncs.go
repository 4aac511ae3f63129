package eval

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Kernels of the jsonb operators and functions. Values are canonical jsonb
// text (types/jsonb.go); kernels that need the structure parse it, and the
// field and element extractions with a constant key (-> and ->>) run as
// jsonbFieldNode over the text without building a tree.

func jsonbErr(format string, args ...any) *sqlerr.Error {
	return sqlerr.New(sqlerr.InvalidParameterValue, format, args...)
}

func parseJ(d types.Datum) types.JSON { return types.MustParseJSON(d.S) }

func jsonbDatum(v types.JSON) types.Datum { return types.DText(types.JSONText(v)) }

// jsonbText is the ->> form of v: a string's value, NULL for a JSON null,
// the text of anything else.
func jsonbText(v types.JSON) types.Datum {
	switch v.Kind {
	case types.JSONNull:
		return types.Null
	case types.JSONString:
		return types.DText(v.Str)
	}
	return types.DText(types.JSONText(v))
}

// jsonbIndex returns element i of array v (negative counts from the end).
// A top-level scalar is an array of one element here, as in PostgreSQL.
func jsonbIndex(v types.JSON, i int64) (types.JSON, bool) {
	if !v.IsContainer() && (i == 0 || i == -1) {
		return v, true
	}
	if v.Kind != types.JSONArray {
		return types.JSON{}, false
	}
	n := int64(len(v.Elems))
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return types.JSON{}, false
	}
	return v.Elems[i], true
}

// jsonbArrayIndex is jsonbIndex on an array.
func jsonbArrayIndex(v types.JSON, i int64) (types.JSON, bool) {
	if v.Kind != types.JSONArray {
		return types.JSON{}, false
	}
	return jsonbIndex(v, i)
}

// jsonbWalk follows a text[] path: keys through objects, integer positions
// through arrays. ok is false if the path leads nowhere.
func jsonbWalk(v types.JSON, path []types.Datum) (types.JSON, bool) {
	for _, p := range path {
		if p.Null {
			return types.JSON{}, false
		}
		switch v.Kind {
		case types.JSONObject:
			var ok bool
			if v, ok = v.Get(p.S); !ok {
				return types.JSON{}, false
			}
		case types.JSONArray:
			i, err := strconv.ParseInt(strings.TrimSpace(p.S), 10, 32)
			if err != nil {
				return types.JSON{}, false
			}
			var ok bool
			if v, ok = jsonbArrayIndex(v, i); !ok {
				return types.JSON{}, false
			}
		default:
			return types.JSON{}, false
		}
	}
	return v, true
}

func jsonbKernel(f func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error)) kernelMaker {
	return func([]types.T, types.T) scalarFn { return f }
}

func init() {
	j, txt, i4, b := types.JSONBT, types.TextT, types.Int32T, types.BoolT
	textArr := types.ArrayOf(txt)
	reg(ir.FnJSONBField, ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if v, ok := parseJ(a[0]).Get(a[1].S); ok {
			return jsonbDatum(v), nil
		}
		return types.Null, nil
	}))
	reg(ir.FnJSONBFieldText, ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if v, ok := parseJ(a[0]).Get(a[1].S); ok {
			return jsonbText(v), nil
		}
		return types.Null, nil
	}))
	reg(ir.FnJSONBElem, ts(j, i4), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if v, ok := jsonbIndex(parseJ(a[0]), a[1].I); ok {
			return jsonbDatum(v), nil
		}
		return types.Null, nil
	}))
	reg(ir.FnJSONBElemText, ts(j, i4), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if v, ok := jsonbIndex(parseJ(a[0]), a[1].I); ok {
			return jsonbText(v), nil
		}
		return types.Null, nil
	}))
	path := func(text bool) kernelMaker {
		return jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			v, ok := jsonbWalk(parseJ(a[0]), a[1].Arr)
			switch {
			case !ok:
				return types.Null, nil
			case text:
				return jsonbText(v), nil
			}
			return jsonbDatum(v), nil
		})
	}
	reg(ir.FnJSONBPath, ts(j, textArr), path(false))
	reg(ir.FnJSONBPathText, ts(j, textArr), path(true))
	variadicPath := func(text bool) kernelMaker {
		inner := path(text)(nil, types.T{})
		return func(args []types.T, _ types.T) scalarFn {
			return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				return inner(k, []types.Datum{a[0], types.DArray(a[1:])})
			}
		}
	}
	reg("jsonb_extract_path", ts(j, txt), variadicPath(false))
	reg("jsonb_extract_path_text", ts(j, txt), variadicPath(true))
	reg(ir.FnJSONBContains, ts(j, j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DBool(jsonbTopContains(parseJ(a[0]), parseJ(a[1]))), nil
	}))
	reg(ir.FnJSONBContained, ts(j, j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DBool(jsonbTopContains(parseJ(a[1]), parseJ(a[0]))), nil
	}))
	reg(ir.FnJSONBExists, ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DBool(jsonbExists(parseJ(a[0]), a[1].S)), nil
	}))
	exists := func(all bool) kernelMaker {
		return jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			v := parseJ(a[0])
			for _, k := range a[1].Arr {
				if k.Null {
					continue
				}
				if jsonbExists(v, k.S) != all {
					return types.DBool(!all), nil
				}
			}
			return types.DBool(all), nil
		})
	}
	reg(ir.FnJSONBExistsAny, ts(j, textArr), exists(false))
	reg(ir.FnJSONBExistsAll, ts(j, textArr), exists(true))
	reg(ir.FnJSONBConcat, ts(j, j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return jsonbDatum(jsonbConcat(parseJ(a[0]), parseJ(a[1]))), nil
	}))
	reg(ir.FnJSONBDelete, ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v, err := jsonbDeleteKeys(parseJ(a[0]), []types.Datum{a[1]})
		return jsonbDatum(v), err
	}))
	reg(ir.FnJSONBDelete, ts(j, textArr), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v, err := jsonbDeleteKeys(parseJ(a[0]), a[1].Arr)
		return jsonbDatum(v), err
	}))
	reg(ir.FnJSONBDelete, ts(j, i4), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v := parseJ(a[0])
		switch v.Kind {
		case types.JSONObject:
			return types.Null, jsonbErr("cannot delete from object using integer index")
		case types.JSONArray:
		default:
			return types.Null, jsonbErr("cannot delete from scalar")
		}
		i, n := a[1].I, int64(len(v.Elems))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return a[0], nil
		}
		elems := append(append([]types.JSON(nil), v.Elems[:i]...), v.Elems[i+1:]...)
		return jsonbDatum(types.JSONArrayOf(elems)), nil
	}))
	reg(ir.FnJSONBDeletePath, ts(j, textArr), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v := parseJ(a[0])
		if !v.IsContainer() {
			return types.Null, jsonbErr("cannot delete path in scalar")
		}
		out, err := jsonbSetPath(v, a[1].Arr, 0, types.JSON{}, setDelete)
		return jsonbDatum(out), err
	}))
	reg("jsonb_typeof", ts(j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DText(parseJ(a[0]).Kind.String()), nil
	}))
	reg("jsonb_array_length", ts(j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v := parseJ(a[0])
		switch v.Kind {
		case types.JSONArray:
			return types.DInt(int64(len(v.Elems))), nil
		case types.JSONObject:
			return types.Null, jsonbErr("cannot get array length of a non-array")
		}
		return types.Null, jsonbErr("cannot get array length of a scalar")
	}))
	reg("jsonb_strip_nulls", ts(j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return jsonbDatum(jsonbStripNulls(parseJ(a[0]))), nil
	}))
	reg("jsonb_pretty", ts(j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DText(string(types.AppendJSONPretty(nil, parseJ(a[0]), 0))), nil
	}))
	set := func(mode setMode) kernelMaker {
		return jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			v := parseJ(a[0])
			m := mode
			if len(a) == 4 && a[3].Bool() {
				m++ // create_missing / insert_after
			}
			if !v.IsContainer() {
				return types.Null, jsonbErr("cannot set path in scalar")
			}
			out, err := jsonbSetPath(v, a[1].Arr, 0, parseJ(a[2]), m)
			return jsonbDatum(out), err
		})
	}
	// jsonb_set's create_missing defaults to true, jsonb_insert's
	// insert_after to false.
	reg("jsonb_set", ts(j, textArr, j), set(setCreate))
	reg("jsonb_set", ts(j, textArr, j, b), set(setReplace))
	reg("jsonb_insert", ts(j, textArr, j), set(setInsertBefore))
	reg("jsonb_insert", ts(j, textArr, j, b), set(setInsertBefore))
}

// jsonbExists is ?: a top-level key, string array element or string scalar.
func jsonbExists(v types.JSON, key string) bool {
	switch v.Kind {
	case types.JSONObject:
		_, ok := v.Get(key)
		return ok
	case types.JSONArray:
		for _, e := range v.Elems {
			if e.Kind == types.JSONString && e.Str == key {
				return true
			}
		}
		return false
	case types.JSONString:
		return v.Str == key
	}
	return false
}

// jsonbTopContains is @> on top-level values: a raw scalar is an array of
// one element that only another raw scalar is contained in.
func jsonbTopContains(a, b types.JSON) bool {
	switch {
	case !a.IsContainer():
		return !b.IsContainer() && types.JSONEqual(a, b)
	case a.Kind == types.JSONArray && !b.IsContainer():
		return jsonbContains(a, types.JSONArrayOf([]types.JSON{b}))
	}
	return jsonbContains(a, b)
}

// jsonbContains is PostgreSQL's JsonbDeepContains.
func jsonbContains(a, b types.JSON) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case types.JSONObject:
		for i, k := range b.Keys {
			av, ok := a.Get(k)
			if !ok || !jsonbContains(av, b.Elems[i]) {
				return false
			}
		}
		return true
	case types.JSONArray:
		for _, be := range b.Elems {
			found := false
			for _, ae := range a.Elems {
				if be.IsContainer() {
					found = jsonbContains(ae, be)
				} else {
					found = !ae.IsContainer() && types.JSONEqual(ae, be)
				}
				if found {
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return types.JSONEqual(a, b)
}

// jsonbConcat is ||: objects merge (the right one wins), anything else
// concatenates as arrays, a non-array becoming a one-element array.
func jsonbConcat(a, b types.JSON) types.JSON {
	if a.Kind == types.JSONObject && b.Kind == types.JSONObject {
		var ob types.JSONObjectBuilder
		for i, k := range a.Keys {
			ob.Add(k, a.Elems[i])
		}
		for i, k := range b.Keys {
			ob.Add(k, b.Elems[i])
		}
		return ob.Finish()
	}
	asArr := func(v types.JSON) []types.JSON {
		if v.Kind == types.JSONArray {
			return v.Elems
		}
		return []types.JSON{v}
	}
	return types.JSONArrayOf(append(append([]types.JSON(nil), asArr(a)...), asArr(b)...))
}

func jsonbDeleteKeys(v types.JSON, keys []types.Datum) (types.JSON, *sqlerr.Error) {
	switch v.Kind {
	case types.JSONObject:
		for _, k := range keys {
			if !k.Null {
				v = v.Delete(k.S)
			}
		}
		return v, nil
	case types.JSONArray:
		var out []types.JSON
		for _, e := range v.Elems {
			drop := false
			for _, k := range keys {
				drop = drop || (!k.Null && e.Kind == types.JSONString && e.Str == k.S)
			}
			if !drop {
				out = append(out, e)
			}
		}
		return types.JSONArrayOf(out), nil
	}
	return types.JSON{}, jsonbErr("cannot delete from scalar")
}

func jsonbStripNulls(v types.JSON) types.JSON {
	switch v.Kind {
	case types.JSONObject:
		out := types.JSON{Kind: types.JSONObject}
		for i, k := range v.Keys {
			if v.Elems[i].Kind == types.JSONNull {
				continue
			}
			out.Keys = append(out.Keys, k)
			out.Elems = append(out.Elems, jsonbStripNulls(v.Elems[i]))
		}
		return out
	case types.JSONArray:
		out := make([]types.JSON, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = jsonbStripNulls(e)
		}
		return types.JSONArrayOf(out)
	}
	return v
}

// setMode is what jsonbSetPath does at the end of the path.
type setMode uint8

const (
	setReplace      setMode = iota // jsonb_set, create_missing false
	setCreate                      // jsonb_set, create_missing true
	setInsertBefore                // jsonb_insert
	setInsertAfter                 // jsonb_insert, insert_after true
	setDelete                      // #-
)

// jsonbSetPath returns v with the value at path[pos:] replaced, created,
// inserted or deleted, as jsonb_set, jsonb_insert and #- do (setPath in
// PostgreSQL's jsonfuncs.c). A path that leads nowhere changes nothing.
func jsonbSetPath(v types.JSON, path []types.Datum, pos int, nv types.JSON, mode setMode) (types.JSON, *sqlerr.Error) {
	if pos >= len(path) {
		return v, nil
	}
	p := path[pos]
	if p.Null {
		return types.JSON{}, sqlerr.New(sqlerr.NullValueNotAllowed, "path element at position %d is null", pos+1)
	}
	last := pos == len(path)-1
	switch v.Kind {
	case types.JSONObject:
		cur, ok := v.Get(p.S)
		switch {
		case !ok && last && (mode == setCreate || mode == setInsertBefore || mode == setInsertAfter):
			return v.Set(p.S, nv), nil
		case !ok:
			return v, nil
		case last && mode == setDelete:
			return v.Delete(p.S), nil
		case last && (mode == setInsertBefore || mode == setInsertAfter):
			return types.JSON{}, jsonbErr("cannot replace existing key").
				WithHint("Try using the function jsonb_set to replace key value.")
		case last:
			return v.Set(p.S, nv), nil
		}
		sub, err := jsonbSetPath(cur, path, pos+1, nv, mode)
		if err != nil {
			return types.JSON{}, err
		}
		return v.Set(p.S, sub), nil
	case types.JSONArray:
		i, perr := strconv.ParseInt(strings.TrimSpace(p.S), 10, 32)
		if perr != nil {
			return types.JSON{}, sqlerr.New(sqlerr.InvalidTextRepresentation,
				"path element at position %d is not an integer: \"%s\"", pos+1, p.S)
		}
		n := int64(len(v.Elems))
		if i < 0 {
			i += n
		}
		elems := append([]types.JSON(nil), v.Elems...)
		if i < 0 || i >= n {
			if !last || mode == setReplace || mode == setDelete {
				return v, nil
			}
			if i < 0 {
				return types.JSONArrayOf(append([]types.JSON{nv}, elems...)), nil
			}
			return types.JSONArrayOf(append(elems, nv)), nil
		}
		if !last {
			sub, err := jsonbSetPath(elems[i], path, pos+1, nv, mode)
			if err != nil {
				return types.JSON{}, err
			}
			elems[i] = sub
			return types.JSONArrayOf(elems), nil
		}
		switch mode {
		case setDelete:
			return types.JSONArrayOf(append(elems[:i:i], elems[i+1:]...)), nil
		case setInsertBefore, setInsertAfter:
			at := i
			if mode == setInsertAfter {
				at++
			}
			out := append(append(append([]types.JSON(nil), elems[:at]...), nv), elems[at:]...)
			return types.JSONArrayOf(out), nil
		}
		elems[i] = nv
		return types.JSONArrayOf(elems), nil
	}
	return v, nil
}

// castJSONB converts a jsonb scalar to bool or a number type, with
// PostgreSQL's error for a value of another kind.
func castJSONB(to types.T, d types.Datum) (types.Datum, *sqlerr.Error) {
	v := parseJ(d)
	want := types.JSONNumber
	if to.Kind == types.Bool {
		want = types.JSONBool
	}
	if v.Kind != want {
		kind := v.Kind.String()
		if v.Kind == types.JSONNumber {
			kind = "numeric"
		}
		return types.Null, jsonbErr("cannot cast jsonb %s to type %s", kind, to)
	}
	if want == types.JSONBool {
		return types.DBool(v.Bool), nil
	}
	if to.Kind == types.Float32 || to.Kind == types.Float64 || to.Kind == types.Numeric {
		r, err := types.ParseText(to, v.Str)
		if err != nil {
			return types.Null, sqlerr.Wrap(err)
		}
		return r, nil
	}
	n, err := types.ParseText(types.NumericT, v.Str)
	if err != nil {
		return types.Null, sqlerr.Wrap(err)
	}
	return castNumber(types.NumericT, to, n)
}

// jsonbPolyKernel returns the kernel of jsonb_build_object,
// jsonb_build_array or to_jsonb for the argument types.
func jsonbPolyKernel(fn string, args []types.T) scalarFn {
	switch fn {
	case ir.FnToJSONB:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return jsonbDatum(types.ToJSON(args[0], a[0])), nil
		}
	case ir.FnJSONBBuildArray:
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			elems := make([]types.JSON, len(a))
			for i, d := range a {
				elems[i] = types.ToJSON(args[i], d)
			}
			return jsonbDatum(types.JSONArrayOf(elems)), nil
		}
	}
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		var ob types.JSONObjectBuilder
		for i := 0; i+1 < len(a); i += 2 {
			k, err := jsonbKey(args[i], a[i], i+1)
			if err != nil {
				return types.Null, err
			}
			ob.Add(k, types.ToJSON(args[i+1], a[i+1]))
		}
		return jsonbDatum(ob.Finish()), nil
	}
}

// jsonbKey is the text of an object key argument (argument n).
func jsonbKey(t types.T, d types.Datum, n int) (string, *sqlerr.Error) {
	if d.Null {
		return "", jsonbErr("argument %d: key must not be null", n)
	}
	if t.Kind == types.Array || t.Kind == types.JSONB {
		return "", jsonbErr("key value must be scalar, not array, composite, or json")
	}
	v := types.ToJSON(t, d)
	if v.Kind == types.JSONBool {
		return strconv.FormatBool(v.Bool), nil
	}
	return v.Str, nil
}

// The arrays behind the jsonb set-returning functions (ir.FnJSONBElements
// and friends), with PostgreSQL's errors for a value of the wrong kind.
func init() {
	j := types.JSONBT
	kindErr := func(v types.JSON, fn, what string) *sqlerr.Error {
		if v.Kind == types.JSONArray {
			return jsonbErr("cannot %s on an array", fn)
		}
		if v.Kind == types.JSONObject {
			return jsonbErr("cannot %s from an object", what)
		}
		return jsonbErr("cannot %s on a scalar", fn)
	}
	elems := func(text bool) kernelMaker {
		return jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			v := parseJ(a[0])
			switch v.Kind {
			case types.JSONArray:
			case types.JSONObject:
				return types.Null, jsonbErr("cannot extract elements from an object")
			default:
				return types.Null, jsonbErr("cannot extract elements from a scalar")
			}
			out := make([]types.Datum, len(v.Elems))
			for i, e := range v.Elems {
				if text {
					out[i] = jsonbText(e)
				} else {
					out[i] = jsonbDatum(e)
				}
			}
			return types.DArray(out), nil
		})
	}
	reg(ir.FnJSONBElements, ts(j), elems(false))
	reg(ir.FnJSONBElementsText, ts(j), elems(true))
	reg(ir.FnJSONBKeys, ts(j), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		v := parseJ(a[0])
		if v.Kind != types.JSONObject {
			return types.Null, kindErr(v, "call jsonb_object_keys", "")
		}
		out := make([]types.Datum, len(v.Keys))
		for i, k := range v.Keys {
			out[i] = types.DText(k)
		}
		return types.DArray(out), nil
	}))
	each := func(part func(v types.JSON, i int) types.Datum) kernelMaker {
		return jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			v := parseJ(a[0])
			if v.Kind != types.JSONObject {
				return types.Null, jsonbErr("cannot call jsonb_each on a non-object")
			}
			out := make([]types.Datum, len(v.Keys))
			for i := range v.Keys {
				out[i] = part(v, i)
			}
			return types.DArray(out), nil
		})
	}
	reg(ir.FnJSONBEachKeys, ts(j), each(func(v types.JSON, i int) types.Datum { return types.DText(v.Keys[i]) }))
	reg(ir.FnJSONBEachValues, ts(j), each(func(v types.JSON, i int) types.Datum { return jsonbDatum(v.Elems[i]) }))
	reg(ir.FnJSONBEachText, ts(j), each(func(v types.JSON, i int) types.Datum { return jsonbText(v.Elems[i]) }))
}

// The jsonpath functions (types.JSONPath: lax mode, a subset).
func init() {
	j, txt := types.JSONBT, types.TextT
	query := func(a []types.Datum) ([]types.JSON, *sqlerr.Error) {
		p, err := types.ParseJSONPath(a[1].S)
		if err != nil {
			return nil, sqlerr.Wrap(err)
		}
		return p.Query(parseJ(a[0])), nil
	}
	reg(ir.FnJSONBPathQueryArr, ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		items, err := query(a)
		return jsonbDatum(types.JSONArrayOf(items)), err
	}))
	reg(ir.FnJSONBPathQuery, ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		items, err := query(a)
		out := make([]types.Datum, len(items))
		for i, v := range items {
			out[i] = jsonbDatum(v)
		}
		return types.DArray(out), err
	}))
	reg("jsonb_path_query_first", ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		items, err := query(a)
		if err != nil || len(items) == 0 {
			return types.Null, err
		}
		return jsonbDatum(items[0]), nil
	}))
	reg("jsonb_path_exists", ts(j, txt), jsonbKernel(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		items, err := query(a)
		return types.DBool(len(items) > 0), err
	}))
}
