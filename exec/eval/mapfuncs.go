package eval

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Kernels of the map functions (RisingWave's). A map datum holds its
// entries in Arr, each a struct datum of key and value, in insertion
// order; keys are unique and not NULL.

var (
	errMapNullKey = sqlerr.New(sqlerr.NullValueNotAllowed, "map keys must not be NULL")
	errMapDupKey  = sqlerr.New(sqlerr.InvalidParameterValue, "map keys must be unique")
	errMapLengths = sqlerr.New(sqlerr.InvalidParameterValue, "map keys and values have different lengths")
)

func entry(k, v types.Datum) types.Datum { return types.DStruct([]types.Datum{k, v}) }

// mapFind returns the index of key k in the entries of m, or -1.
func mapFind(kt types.T, m []types.Datum, k types.Datum) int {
	for i, e := range m {
		if types.Compare(kt, e.Arr[0], k) == 0 {
			return i
		}
	}
	return -1
}

// newMap builds a map of keys and values, refusing NULL and repeated keys.
func newMap(kt types.T, ks, vs []types.Datum) (types.Datum, *sqlerr.Error) {
	if len(ks) != len(vs) {
		return types.Null, errMapLengths
	}
	out := make([]types.Datum, 0, len(ks))
	for i, k := range ks {
		if k.Null {
			return types.Null, errMapNullKey
		}
		if mapFind(kt, out, k) >= 0 {
			return types.Null, errMapDupKey
		}
		out = append(out, entry(k, vs[i]))
	}
	return types.DArray(out), nil
}

// without returns the entries of m but key k.
func without(kt types.T, m []types.Datum, k types.Datum) []types.Datum {
	out := make([]types.Datum, 0, len(m))
	for _, e := range m {
		if types.Compare(kt, e.Arr[0], k) != 0 {
			out = append(out, e)
		}
	}
	return out
}

func mapKernel(f func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error)) kernelMaker {
	return func(args []types.T, result types.T) scalarFn {
		var kt types.T
		switch {
		case len(args) > 0 && args[0].Kind == types.Map:
			kt = args[0].KeyT()
		case result.Kind == types.Map:
			kt = result.KeyT()
		}
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) { return f(kt, a) }
	}
}

func projectEntries(m []types.Datum, j int) types.Datum {
	out := make([]types.Datum, len(m))
	for i, e := range m {
		out[i] = e.Arr[j]
	}
	return types.DArray(out)
}

var mapKernels = map[string]kernelMaker{
	ir.FnMapLiteral: mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		var ks, vs []types.Datum
		for i, d := range a {
			if i%2 == 0 {
				ks = append(ks, d)
			} else {
				vs = append(vs, d)
			}
		}
		return newMap(kt, ks, vs)
	}),
	"map_from_key_values": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return newMap(kt, a[0].Arr, a[1].Arr)
	}),
	"map_from_entries": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		var ks, vs []types.Datum
		for _, e := range a[0].Arr {
			if e.Null {
				return types.Null, errMapNullKey
			}
			ks, vs = append(ks, e.Arr[0]), append(vs, e.Arr[1])
		}
		return newMap(kt, ks, vs)
	}),
	"map_access": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if i := mapFind(kt, a[0].Arr, a[1]); i >= 0 {
			return a[0].Arr[i].Arr[1], nil
		}
		return types.Null, nil
	}),
	"map_contains": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DBool(mapFind(kt, a[0].Arr, a[1]) >= 0), nil
	}),
	"map_keys": mapKernel(func(_ types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return projectEntries(a[0].Arr, 0), nil
	}),
	"map_values": mapKernel(func(_ types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return projectEntries(a[0].Arr, 1), nil
	}),
	"map_entries": mapKernel(func(_ types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DArray(append([]types.Datum(nil), a[0].Arr...)), nil
	}),
	"map_length": mapKernel(func(_ types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(len(a[0].Arr))), nil
	}),
	// map_cat(a, b): the entries of a, overridden and extended by b's; a
	// NULL map is empty unless both are.
	"map_cat": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		switch {
		case a[0].Null:
			return a[1], nil
		case a[1].Null:
			return a[0], nil
		}
		out := append([]types.Datum(nil), a[0].Arr...)
		for _, e := range a[1].Arr {
			if i := mapFind(kt, out, e.Arr[0]); i >= 0 {
				out = append(out[:i:i], out[i+1:]...)
			}
			out = append(out, e)
		}
		return types.DArray(out), nil
	}),
	// map_insert(m, k, v): m with k set to v (moved to the end); a NULL key
	// leaves m unchanged.
	"map_insert": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.Null, nil
		}
		if a[1].Null {
			return a[0], nil
		}
		return types.DArray(append(without(kt, a[0].Arr, a[1]), entry(a[1], a[2]))), nil
	}),
	"map_delete": mapKernel(func(kt types.T, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null || a[1].Null {
			return a[0], nil
		}
		return types.DArray(without(kt, a[0].Arr, a[1])), nil
	}),
}
