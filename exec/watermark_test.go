package exec

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// TestKeepRowsSplitsPairs checks that an update pair cut by dropping late
// rows leaves a lone Delete or Insert, never half a pair.
func TestKeepRowsSplitsPairs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ts := []types.T{types.Int64T}
	for _, tc := range []struct {
		keep []int32
		want []Op
	}{
		{[]int32{0, 1, 2, 3, 4}, []Op{Insert, UpdateDelete, UpdateInsert, UpdateDelete, UpdateInsert}},
		{[]int32{0, 2, 3}, []Op{Insert, Insert, Delete}},
		{[]int32{1, 4}, []Op{Delete, Insert}},
		{nil, []Op{}},
	} {
		bs := newBuilders(mem, ts)
		for i := 0; i < 5; i++ {
			types.AppendDatum(bs[0], types.Int64T, types.DInt(int64(i)))
		}
		b := NewBatch(buildRecord(SchemaOf(ts), bs, 5), []Op{Insert, UpdateDelete, UpdateInsert, UpdateDelete, UpdateInsert})
		releaseBuilders(bs)
		got, err := keepRows(mem, b, tc.keep)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Ops, tc.want) || got.Len() != len(tc.keep) {
			t.Errorf("keep %v: ops %v, want %v", tc.keep, got.Ops, tc.want)
		}
		got.Release()
	}
}
