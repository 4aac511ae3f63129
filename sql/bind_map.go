package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Maps in expressions (RisingWave's map functions): MAP {k: v, ...},
// map_from_key_values, map_from_entries, m[k] and map_access, map_keys,
// map_values, map_entries, map_length and cardinality, map_contains,
// map_cat, map_insert and map_delete. The calls are typed here from their
// map argument; the evaluator has a kernel for each name.

// isMapFunction reports whether fn is a map function bound by bindMapCall.
func isMapFunction(fn string) bool { return ir.MapFuncs[fn] != nil }

// bindMapCall types a call of a map function.
func (b *binder) bindMapCall(fn string, args []ir.Expr, loc int32) (ir.Expr, error) {
	if fn == "cardinality" {
		fn = "map_length"
	}
	switch fn {
	case ir.FnMapLiteral, "map_from_key_values", "map_from_entries":
		return b.bindMapConstructor(fn, args, loc)
	}
	s := ir.MapFuncs[fn]
	if len(args) != len(s.Args) || args[0].Type().Kind != types.Map {
		return nil, b.errAt(loc, noSuchFunction(fn, args))
	}
	m := args[0].Type()
	out := make([]ir.Expr, len(args))
	for i, a := range args {
		var want types.T
		switch s.Args[i] {
		case 'm':
			want = m
		case 'k':
			want = m.KeyT()
		case 'v':
			want = m.ValueT()
		}
		var err error
		if s.Args[i] == 'm' && a.Type().Kind == types.Map && !types.Identical(a.Type(), m) {
			return nil, b.errAt(loc, noSuchFunction(fn, args))
		}
		if out[i], err = b.coerce(a, want, loc); err != nil {
			return nil, err
		}
	}
	return &ir.Call{Fn: fn, Args: out, T: s.Result(m)}, nil
}

// bindMapConstructor types MAP {...}, map_from_key_values(keys, values)
// and map_from_entries(entries).
func (b *binder) bindMapConstructor(fn string, args []ir.Expr, loc int32) (ir.Expr, error) {
	var kt, vt types.T
	var err error
	switch fn {
	case ir.FnMapLiteral:
		if len(args) == 0 {
			return nil, b.errAt(loc, sqlerr.New(sqlerr.IndeterminateDatatype, "cannot determine type of empty map").
				WithHint("Explicitly cast to the desired type, for example MAP{}::map(int,int)."))
		}
		var ks, vs []ir.Expr
		for i, a := range args {
			if i%2 == 0 {
				ks = append(ks, a)
			} else {
				vs = append(vs, a)
			}
		}
		if kt, err = b.commonType(ks, "MAP", loc); err != nil {
			return nil, err
		}
		if vt, err = b.commonType(vs, "MAP", loc); err != nil {
			return nil, err
		}
		out := make([]ir.Expr, len(args))
		for i, a := range args {
			t := kt
			if i%2 == 1 {
				t = vt
			}
			if out[i], err = b.coerce(a, t, loc); err != nil {
				return nil, err
			}
		}
		args = out
	case "map_from_key_values":
		if len(args) != 2 || args[0].Type().Kind != types.Array || args[1].Type().Kind != types.Array {
			return nil, b.errAt(loc, noSuchFunction(fn, args))
		}
		kt, vt = args[0].Type().ElemT(), args[1].Type().ElemT()
	case "map_from_entries":
		t := args[0].Type()
		if len(args) != 1 || t.Kind != types.Array || t.Elem != types.Struct || t.Fields.Len() != 2 {
			return nil, b.errAt(loc, noSuchFunction(fn, args))
		}
		kt, vt = t.Fields.At(0).Type, t.Fields.At(1).Type
	}
	if !types.MapKeyAllowed(kt) {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.FeatureNotSupported, "invalid map key type: %s", kt).
			WithHint("Only string and integral types are allowed as map keys."))
	}
	return &ir.Call{Fn: fn, Args: args, T: types.MapOf(kt, vt)}, nil
}
