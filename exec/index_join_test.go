package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The stored relation of the lookup join tests and benchmarks: (id bigint
// PRIMARY KEY, k bigint, v bigint), with a secondary index on k. The input
// is (x bigint, y bigint).
var lookupRelTypes = []types.T{types.Int64T, types.Int64T, types.Int64T}
var lookupInTypes = []types.T{types.Int64T, types.Int64T}

// lookupRelation is a committed relation: its rows and its index on k.
type lookupRelation struct {
	store      *state.Store
	rows, kidx state.TableID
}

// writeLookupRelation commits rows (id, k, v) as a relation keyed by id
// with an index on k, in store; a nil k is NULL.
func writeLookupRelation(tb testing.TB, mem memory.Allocator, store *state.Store, rows [][3]*int64) lookupRelation {
	r := lookupRelation{store: store, rows: 1, kidx: 2}
	rt, it := store.Table(r.rows), store.Table(r.kidx)
	codec := state.NewRowCodec(lookupRelTypes)
	for start := 0; start < len(rows); start += BatchSize {
		rec := int64Record(mem, rows[start:min(start+BatchSize, len(rows))])
		for i := 0; i < int(rec.NumRows()); i++ {
			pk := state.AppendKey(nil, types.Int64T, rec.Column(0), i)
			rt.Put(pk, codec.Append(nil, rec.Columns(), i))
			ik := state.AppendKey(nil, types.Int64T, rec.Column(1), i)
			it.Put(append(ik, pk...), nil)
		}
		rec.Release()
	}
	rt.Seal(1)
	it.Seal(1)
	if _, err := store.Commit(1); err != nil {
		tb.Fatal(err)
	}
	return r
}

// int64Record builds a record of bigint columns from rows (nil: NULL).
func int64Record[R [2]*int64 | [3]*int64](mem memory.Allocator, rows []R) arrow.RecordBatch {
	var zero R
	width := len(zero)
	bs := newBuilders(mem, lookupRelTypes[:width])
	defer releaseBuilders(bs)
	for _, r := range rows {
		for c := 0; c < width; c++ {
			if v := r[c]; v == nil {
				bs[c].AppendNull()
			} else {
				bs[c].(*array.Int64Builder).Append(*v)
			}
		}
	}
	return buildRecord(SchemaOf(lookupRelTypes[:width]), bs, len(rows))
}

func i64(v int64) *int64 { return &v }

// collectRows renders a stream's rows as sorted strings.
type collectRows struct{ rows []string }

func (c *collectRows) Emit(_ context.Context, m Message) error {
	if m.Batch == nil {
		return nil
	}
	defer m.Batch.Release()
	rec := m.Batch.Rec
	for i := 0; i < int(rec.NumRows()); i++ {
		s := m.Batch.Ops[i].String()
		for c := 0; c < int(rec.NumCols()); c++ {
			col := rec.Column(c)
			if col.IsNull(i) {
				s += " NULL"
			} else {
				s += fmt.Sprintf(" %d", col.(*array.Int64).Value(i))
			}
		}
		c.rows = append(c.rows, s)
	}
	return nil
}

// TestIndexJoin checks every join type through the key and through the
// index against a nested loop over the same rows: NULL keys, keys with no,
// one and several matches, keys repeated in a batch, a filter on the
// relation and a condition on the pairs.
func TestIndexJoin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var rel [][3]*int64
	for id := int64(1); id <= 60; id++ {
		var k *int64
		if id%7 != 0 {
			k = i64(id % 9)
		}
		rel = append(rel, [3]*int64{i64(id), k, i64(id * 10)})
	}
	r := writeLookupRelation(t, mem, store, rel)
	snap := store.Snapshot()
	defer snap.Release()
	var in [][2]*int64
	for x := int64(0); x < 30; x++ {
		var key *int64
		if x%5 != 4 {
			key = i64(x % 12 * 6) // ids up to 66: some beyond the relation
		}
		in = append(in, [2]*int64{key, i64(x)})
	}
	// filter: v <> 120; cond: y < v / 20 (y is the input's second column).
	filter := func(row [3]*int64) bool { return *row[2] != 120 }
	cond := func(in [2]*int64, row [3]*int64) bool { return *in[1] < *row[2]/20 }
	filterExpr := &ir.Call{Fn: ir.FnNe, T: types.BoolT, Args: []ir.Expr{
		&ir.InputRef{Index: 2, T: types.Int64T}, &ir.Const{Value: types.DInt(120), T: types.Int64T}}}
	condExpr := &ir.Call{Fn: ir.FnLt, T: types.BoolT, Args: []ir.Expr{
		&ir.InputRef{Index: 1, T: types.Int64T},
		&ir.Call{Fn: ir.FnDiv, T: types.Int64T, Args: []ir.Expr{
			&ir.InputRef{Index: 4, T: types.Int64T}, &ir.Const{Value: types.DInt(20), T: types.Int64T}}}}}
	for _, typ := range []ir.JoinType{ir.InnerJoin, ir.LeftJoin, ir.SemiJoin, ir.AntiJoin} {
		for _, viaIndex := range []bool{false, true} {
			for _, withPreds := range []bool{false, true} {
				name := fmt.Sprintf("%s/index=%t/preds=%t", typ, viaIndex, withPreds)
				t.Run(name, func(t *testing.T) {
					col := 0 // the relation column looked up
					if viaIndex {
						col = 1
					}
					spec := IndexJoinSpec{
						Type: typ, InputTypes: lookupInTypes, InputKeys: []int{0}, KeyTypes: []types.T{types.Int64T},
						RelTypes: lookupRelTypes, Rows: snapshotTable{snap: snap, id: r.rows},
					}
					if viaIndex {
						spec.Index = snapshotTable{snap: snap, id: r.kidx}
						spec.IndexCols = []types.T{types.Int64T}
					}
					if withPreds {
						spec.Filter = mustCompile(t, filterExpr)
						spec.Cond = mustCompile(t, condExpr)
					}
					j := NewIndexJoin(mem, &eval.Context{Mem: mem}, spec)
					defer j.Close()
					var got collectRows
					// Two batches, so that keys repeat within and across batches.
					for _, part := range [][][2]*int64{in[:17], in[17:]} {
						if err := j.OnBatch(context.Background(), NewBatch(int64Record(mem, part), nil), &got); err != nil {
							t.Fatal(err)
						}
					}
					var want []string
					for _, x := range in {
						matches := 0
						for _, row := range rel {
							if x[0] == nil || row[col] == nil || *x[0] != *row[col] {
								continue
							}
							if withPreds && (!filter(row) || !cond(x, row)) {
								continue
							}
							matches++
							if typ.KeepsRight() {
								want = append(want, fmt.Sprintf("%s %s %s %s %s", Insert, str(x[0]), str(x[1]), str(row[0]), strs(row[1:])))
							}
						}
						switch {
						case typ == ir.LeftJoin && matches == 0:
							want = append(want, fmt.Sprintf("%s %s %s NULL NULL NULL", Insert, str(x[0]), str(x[1])))
						case typ == ir.SemiJoin && matches > 0, typ == ir.AntiJoin && matches == 0:
							want = append(want, fmt.Sprintf("%s %s %s", Insert, str(x[0]), str(x[1])))
						}
					}
					slices.Sort(want)
					slices.Sort(got.rows)
					if len(want) == 0 {
						t.Fatal("the case tests nothing")
					}
					if !slices.Equal(got.rows, want) {
						t.Fatalf("got %d rows:\n%v\nwant %d:\n%v", len(got.rows), got.rows, len(want), want)
					}
				})
			}
		}
	}
}

func str(v *int64) string {
	if v == nil {
		return "NULL"
	}
	return fmt.Sprint(*v)
}

func strs(vs []*int64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = str(v)
	}
	return fmt.Sprint(s[0], " ", s[1])
}

func mustCompile(tb testing.TB, e ir.Expr) eval.Evaluator {
	ev, err := eval.Compile(e)
	if err != nil {
		tb.Fatal(err)
	}
	return ev
}

// BenchmarkLookupJoin compares a lookup join with the hash join it
// replaces: 1k input rows joined with a committed relation of 1M rows by
// its key (key) and by a secondary index (index). The hash join builds the
// 1k rows (a batch join's right side) and probes it with a scan of the
// whole relation; the lookup join seeks each input key. Every input row
// matches one row. One op is one whole join.
func BenchmarkLookupJoin(b *testing.B) {
	const relRows, inRows = 1 << 20, 1000
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	store, err := state.Open(state.MemoryDir, state.Options{CacheSize: 256 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	rel := make([][3]*int64, relRows)
	for id := range rel {
		// k is a bijection of id, so the index has one entry per key too.
		rel[id] = [3]*int64{i64(int64(id)), i64(int64(relRows - 1 - id)), i64(int64(id) * 3)}
	}
	r := writeLookupRelation(b, mem, store, rel)
	rel = nil
	snap := store.Snapshot()
	defer snap.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([][2]*int64, inRows)
	for i := range in {
		in[i] = [2]*int64{i64(rng.Int64N(relRows)), i64(int64(i))}
	}
	input := int64Record(mem, in)
	defer input.Release()
	ctx := context.Background()
	for _, viaIndex := range []bool{false, true} {
		col := 0
		path := "key"
		if viaIndex {
			col, path = 1, "index"
		}
		b.Run("lookup/"+path, func(b *testing.B) {
			spec := IndexJoinSpec{
				Type: ir.InnerJoin, InputTypes: lookupInTypes, InputKeys: []int{0}, KeyTypes: []types.T{types.Int64T},
				RelTypes: lookupRelTypes, Rows: snapshotTable{snap: snap, id: r.rows},
			}
			if viaIndex {
				spec.Index = snapshotTable{snap: snap, id: r.kidx}
				spec.IndexCols = []types.T{types.Int64T}
			}
			var out countRows
			for i := 0; i < b.N; i++ {
				j := NewIndexJoin(mem, &eval.Context{Mem: mem}, spec)
				input.Retain()
				if err := j.OnBatch(ctx, NewBatch(input, nil), &out); err != nil {
					b.Fatal(err)
				}
				j.Close()
			}
			if out.rows != int64(inRows*b.N) {
				b.Fatalf("%d rows, want %d", out.rows, inRows*b.N)
			}
		})
		b.Run("hash/"+path, func(b *testing.B) {
			var out countRows
			for i := 0; i < b.N; i++ {
				id := state.TableID(100 + 2*i)
				spec := HashJoinSpec{
					Type:       ir.InnerJoin,
					Types:      [2][]types.T{lookupRelTypes, lookupInTypes},
					Keys:       [2][]int{{col}, {0}},
					KeyTypes:   []types.T{types.Int64T},
					Sequence:   [2]bool{true, true},
					Tables:     [2]*state.Table{store.Table(id), store.Table(id + 1)},
					RightFirst: true,
				}
				j := NewHashJoin(mem, &eval.Context{Mem: mem}, spec)
				input.Retain()
				if err := j.OnBatch(ctx, 1, NewBatch(input, nil), &out); err != nil {
					b.Fatal(err)
				}
				probe := OutputFunc(func(ctx context.Context, m Message) error {
					return j.OnBatch(ctx, 0, m.Batch, &out)
				})
				if err := scanRows(ctx, mem, snapshotTable{snap: snap, id: r.rows}, lookupRelTypes, nil, probe); err != nil {
					b.Fatal(err)
				}
				j.Close()
				store.ReleaseTable(id)
				store.ReleaseTable(id + 1)
			}
			if out.rows != int64(inRows*b.N) {
				b.Fatalf("%d rows, want %d", out.rows, inRows*b.N)
			}
		})
	}
}
