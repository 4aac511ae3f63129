package eval

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Structs and maps in expressions.
//
// The binder types the struct and map calls (ir.IsStructFunction); their
// kernels work on datums, row by row. The two hot ones are columnar: a row
// constructor builds its Struct column from its field columns (which it
// retains, no copy), and a field access returns the struct's child column,
// its validity ANDed with the struct's.

// structKernels are the datum kernels of the struct and map calls.
var structKernels = map[string]kernelMaker{
	ir.FnRow: func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DStruct(append([]types.Datum(nil), a...)), nil
		}
	},
	ir.FnStructField: func([]types.T, types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return a[0].Arr[a[1].I], nil
		}
	},
	"struct_eq": structCmp(func(c int) bool { return c == 0 }),
	"struct_ne": structCmp(func(c int) bool { return c != 0 }),
	"struct_lt": structCmp(func(c int) bool { return c < 0 }),
	"struct_le": structCmp(func(c int) bool { return c <= 0 }),
	"struct_gt": structCmp(func(c int) bool { return c > 0 }),
	"struct_ge": structCmp(func(c int) bool { return c >= 0 }),
}

func structCmp(pred func(int) bool) kernelMaker {
	return func(args []types.T, _ types.T) scalarFn {
		t := args[0]
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DBool(pred(types.Compare(t, a[0], a[1]))), nil
		}
	}
}

// structKernel returns the kernel and overload of a struct or map call, or
// nil if fn is not one.
func structKernel(fn string, args []types.T, result types.T) (scalarFn, *ir.Overload) {
	mk := structKernels[fn]
	if mk == nil {
		mk = mapKernels[fn]
	}
	if mk == nil {
		return nil, nil
	}
	return mk(args, result), &ir.Overload{Fn: fn, Args: args, Result: result, Strict: ir.StructFunctionStrict(fn)}
}

// compileStructNode returns the columnar node of a row constructor or a
// field access, or nil.
func compileStructNode(fn string, args []node, rt types.T) node {
	switch fn {
	case ir.FnRow:
		return &rowConsNode{t: rt, args: args}
	case ir.FnStructField:
		if k, ok := asConst(args[1]); ok && !k.d.Null {
			return &fieldNode{t: rt, arg: args[0], idx: int(k.d.I)}
		}
	}
	return nil
}

// rowConsNode is ROW(a, b, ...): a struct column of its argument columns.
type rowConsNode struct {
	t    types.T
	args []node
}

func (n *rowConsNode) typ() types.T { return n.t }

func (n *rowConsNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	cols, err := evalArgs(c, rec, n.args)
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	children := make([]arrow.ArrayData, len(cols))
	for j, col := range cols {
		ft := n.t.Fields.At(j).Type
		if col == nil || !arrow.TypeEqual(col.DataType(), ft.ArrowType()) {
			// A constant, or an untyped (all NULL) column.
			d := types.Null
			if k, ok := asConst(n.args[j]); ok {
				d = k.d
			}
			col = ConstArray(c.mem, ft, d, c.n)
			cols[j] = col
		}
		children[j] = col.Data()
	}
	data := array.NewData(n.t.ArrowType(), c.n, []*memory.Buffer{nil}, children, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// fieldNode is (s).f: the field's child column, NULL where s is.
type fieldNode struct {
	t   types.T
	arg node
	idx int
}

func (n *fieldNode) typ() types.T { return n.t }

func (n *fieldNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	col, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer col.Release()
	return structField(c.mem, col.(*array.Struct), n.idx), nil
}

// structField returns field j of s, masked with s's validity (the caller
// releases it). The field's buffers are shared.
func structField(mem memory.Allocator, s *array.Struct, j int) arrow.Array {
	child := s.Field(j)
	if s.NullN() == 0 {
		child.Retain()
		return child
	}
	cd := child.Data()
	off, n := cd.Offset(), s.Len()
	valid := allocBits(mem, off+n, false)
	defer valid.Release()
	vb := valid.Bytes()
	for i := range n {
		if s.IsValid(i) && child.IsValid(i) {
			bitutil.SetBit(vb, off+i)
		}
	}
	bufs := append([]*memory.Buffer{valid}, cd.Buffers()[1:]...)
	data := array.NewData(cd.DataType(), n, bufs, cd.Children(), array.UnknownNullCount, off)
	defer data.Release()
	return array.MakeFromData(data)
}

// takeStructs gathers the rows of s at rows, field column by field column.
func takeStructs(mem memory.Allocator, s *array.Struct, rows []int32) (arrow.Array, error) {
	children := make([]arrow.ArrayData, s.NumField())
	defer func() {
		for _, d := range children {
			if d != nil {
				d.Release()
			}
		}
	}()
	for j := range children {
		col, err := TakeArray(mem, s.Field(j), rows)
		if err != nil {
			return nil, err
		}
		children[j] = col.Data()
		children[j].Retain()
		col.Release()
	}
	valid, nulls := takeValidity(mem, s, rows), 0
	if valid != nil {
		defer valid.Release()
		nulls = array.UnknownNullCount
	}
	data := array.NewData(s.DataType(), len(rows), []*memory.Buffer{valid}, children, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// castStruct converts struct d of type from to type to field by field.
func castStruct(k *kctx, from, to types.T, d types.Datum, assign bool) (types.Datum, *sqlerr.Error) {
	if from.Fields.Len() != to.Fields.Len() {
		return types.Null, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, to).
			WithDetail(fmt.Sprintf("Input has %d columns, but the target type has %d.", from.Fields.Len(), to.Fields.Len()))
	}
	out := make([]types.Datum, len(d.Arr))
	for j, f := range d.Arr {
		ft, tt := from.Fields.At(j).Type, to.Fields.At(j).Type
		v, err := castDatumMode(k, ft, tt, f, assign)
		if err != nil {
			return types.Null, err
		}
		if tt.Kind == types.Text && !v.Null {
			v.S = strings.Clone(v.S) // not k.buf's
		}
		out[j] = v
	}
	return types.DStruct(out), nil
}

// castStructs converts an array of structs element by element.
func castStructs(k *kctx, from, to types.T, d types.Datum, assign bool) (types.Datum, *sqlerr.Error) {
	out := make([]types.Datum, len(d.Arr))
	for i, e := range d.Arr {
		v, err := castDatumMode(k, from, to, e, assign)
		if err != nil {
			return types.Null, err
		}
		out[i] = v
	}
	return types.DArray(out), nil
}

// castArray casts the elements of array d from type from to type to. Text
// elements are copied, as a text cast result may alias k.buf.
func castArray(k *kctx, from, to types.T, d types.Datum, assign bool) (types.Datum, *sqlerr.Error) {
	out := make([]types.Datum, len(d.Arr))
	for i, e := range d.Arr {
		v, err := castDatumMode(k, from, to, e, assign)
		if err != nil {
			return types.Null, err
		}
		if to.Kind == types.Text && !v.Null {
			v = types.DText(strings.Clone(v.S))
		}
		out[i] = v
	}
	return types.DArray(out), nil
}

// structNullTest is IS NULL (null) or IS NOT NULL over a struct, as
// PostgreSQL tests rows: IS NULL when the struct or every field is NULL,
// IS NOT NULL when it and every field are not.
func structNullTest(null bool) scalarFn {
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		d := a[0]
		if d.Null {
			return types.DBool(null), nil
		}
		for _, f := range d.Arr {
			if f.Null != null {
				return types.DBool(false), nil
			}
		}
		return types.DBool(true), nil
	}
}

// gatherNested is gather for arrays, structs and maps, datum by datum.
func gatherNested(c *ectx, t types.T, brs []branch) arrow.Array {
	src := make([]int, c.n)
	for i := range src {
		src[i] = -1
	}
	for k, b := range brs {
		for i := range c.n {
			if bitutil.BitIsSet(b.rows, i) {
				src[i] = k
			}
		}
	}
	out := newColBuilder(c.mem, t, c.n)
	for i, k := range src {
		switch {
		case k < 0:
			out.appendNull()
		case brs[k].col == nil:
			out.append(brs[k].d)
		default:
			out.append(types.DatumAt(t, brs[k].col, i))
		}
	}
	return out.finish()
}
