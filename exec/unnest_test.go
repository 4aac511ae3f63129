//go:build cgo

package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// TestUnnest checks the rows Unnest emits: arrays zipped to the longest,
// shorter ones padded with NULL, NULL elements kept, nothing for rows whose
// arrays are NULL or empty (one NULL-padded row with outer), the row's
// operation on each (updates as plain deletes and inserts), the columns
// before and after in place, and batches of at most BatchSize rows.
func TestUnnest(t *testing.T) {
	intArr, textArr := types.ArrayOf(types.Int32T), types.ArrayOf(types.TextT)
	ts := []types.T{types.Int64T, intArr, textArr, types.TextT}
	ints := func(vs ...any) types.Datum {
		var es []types.Datum
		for _, v := range vs {
			if v == nil {
				es = append(es, types.Null)
			} else {
				es = append(es, types.DInt(int64(v.(int))))
			}
		}
		return types.DArray(es)
	}
	texts := func(vs ...string) types.Datum {
		var es []types.Datum
		for _, v := range vs {
			es = append(es, types.DText(v))
		}
		return types.DArray(es)
	}
	long := make([]any, BatchSize+1)
	for i := range long {
		long[i] = i
	}
	rows := []struct {
		id         int64
		nums, strs types.Datum
		op         Op
	}{
		{1, ints(1, nil, 3), texts("a"), Insert},
		{2, types.Null, types.Null, Insert},
		{3, ints(), texts(), Delete},
		{4, ints(7), texts("x", "y"), UpdateDelete},
		{4, ints(long...), texts(), UpdateInsert},
	}
	for _, outer := range []bool{false, true} {
		t.Run(fmt.Sprint("outer=", outer), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			bs := newBuilders(mem, ts)
			var ops []Op
			for _, r := range rows {
				types.AppendDatum(bs[0], ts[0], types.DInt(r.id))
				types.AppendDatum(bs[1], ts[1], r.nums)
				types.AppendDatum(bs[2], ts[2], r.strs)
				types.AppendDatum(bs[3], ts[3], types.DText(fmt.Sprint("t", r.id)))
				ops = append(ops, r.op)
			}
			in := NewBatch(buildRecord(SchemaOf(ts), bs, len(rows)), ops)
			releaseBuilders(bs)

			outTypes := []types.T{types.Int64T, types.Int32T, types.TextT, types.Int64T, types.TextT}
			var got []string
			var sizes []int
			out := OutputFunc(func(_ context.Context, m Message) error {
				defer m.Release()
				b := m.Batch
				sizes = append(sizes, b.Len())
				for i := 0; i < b.Len(); i++ {
					var cols []string
					for c, ct := range outTypes {
						cols = append(cols, formatValue(ct, b.Rec.Column(c), i))
					}
					var ord int
					fmt.Sscan(cols[3], &ord)
					if cols[0] == "4" && ord > 3 && ord < BatchSize+1 {
						continue // the middle of the long array
					}
					got = append(got, b.Ops[i].String()+" "+strings.Join(cols, " "))
				}
				return nil
			})
			u := NewUnnest(mem, ts, []int{0}, []int{1, 2}, []int{3}, outer)
			defer u.Close()
			if err := u.OnBatch(context.Background(), in, out); err != nil {
				t.Fatal(err)
			}
			want := []string{
				"+ 1 1 a 1 t1", "+ 1 NULL NULL 2 t1", "+ 1 3 NULL 3 t1",
			}
			if outer {
				want = append(want, "+ 2 NULL NULL NULL t2", "- 3 NULL NULL NULL t3")
			}
			want = append(want, "- 4 7 x 1 t4", "- 4 NULL y 2 t4",
				"+ 4 0 NULL 1 t4", "+ 4 1 NULL 2 t4", "+ 4 2 NULL 3 t4", "+ 4 1024 NULL 1025 t4")
			if !slices.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			total := 0
			for _, s := range sizes {
				if s > BatchSize {
					t.Errorf("batch of %d rows", s)
				}
				total += s
			}
			if w := 3 + 2 + BatchSize + 1 + 2*boolInt(outer); total != w {
				t.Errorf("%d rows, want %d", total, w)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
