package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestKeyedRowsApply writes a batch of inserts, deletes and update pairs
// (one keeping its key, one moving it) through KeyedRows, keyed by (text,
// bigint) with NULLs, once with Apply and once with ApplyEncoded given the
// row-at-a-time encoding, and reads every row back by the key AppendKey
// gives it: the batch's keys must be those of the row-at-a-time encoding,
// and a key's last op must win.
func TestKeyedRowsApply(t *testing.T) {
	for _, encoded := range []bool{false, true} {
		name := "Apply"
		if encoded {
			name = "ApplyEncoded"
		}
		t.Run(name, func(t *testing.T) { testKeyedRowsApply(t, encoded) })
	}
}

func testKeyedRowsApply(t *testing.T, encoded bool) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ts := []types.T{types.TextT, types.Int64T, types.Int64T}
	w := NewKeyedRows(store.Table(1), []int{0, 1}, ts, nil)

	name := array.NewStringBuilder(mem)
	num := array.NewInt64Builder(mem)
	val := array.NewInt64Builder(mem)
	bs := []array.Builder{name, num, val}
	defer releaseBuilders(bs)
	type row struct {
		name string
		null bool // name is NULL
		num  int64
		val  int64
		op   Op
	}
	rows := []row{
		{name: "a", num: 1, val: 10, op: Insert},
		{name: "a\x00b", num: 2, val: 20, op: Insert},
		{null: true, num: 3, val: 30, op: Insert},
		{name: "gone", num: 4, val: 40, op: Insert},
		{name: "gone", num: 4, val: 40, op: Delete},
		{name: "u", num: 5, val: 50, op: UpdateDelete},
		{name: "u", num: 5, val: 51, op: UpdateInsert},
		{name: "moved", num: 6, val: 60, op: UpdateDelete},
		{name: "moved", num: 7, val: 60, op: UpdateInsert},
	}
	ops := make([]Op, len(rows))
	for i, r := range rows {
		if r.null {
			name.AppendNull()
		} else {
			name.Append(r.name)
		}
		num.Append(r.num)
		val.Append(r.val)
		ops[i] = r.op
	}
	rec := buildRecord(SchemaOf(ts), bs, len(rows))
	defer rec.Release()
	codec := state.NewRowCodec(ts)
	keys := make([]string, len(rows))
	var enc EncodedRows
	for i := range rows {
		var key []byte
		key = state.AppendKey(key, ts[0], rec.Column(0), i)
		key = state.AppendKey(key, ts[1], rec.Column(1), i)
		keys[i] = string(key)
		enc.Append(key, codec.Append(nil, rec.Columns(), i))
	}
	for i, r := range rows { // the rows the updates replace are stored
		if r.op == UpdateDelete {
			w.Table.Put(enc.Key(i), enc.Value(i))
		}
	}
	if encoded {
		w.ApplyEncoded(rec, ops, &enc)
	} else {
		w.Apply(rec, ops)
	}

	last := map[string]int{}
	for i, k := range keys {
		last[k] = i
	}
	for k, i := range last {
		r := rows[i]
		v, ok, err := w.Table.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if !r.op.IsInsert() {
			if ok {
				t.Errorf("row %d (%q, %d): stored, want deleted", i, r.name, r.num)
			}
			continue
		}
		if !ok {
			t.Fatalf("row %d (%q, %d): not stored", i, r.name, r.num)
		}
		if want := codec.Append(nil, rec.Columns(), i); string(v) != string(want) {
			t.Errorf("row %d: value %x, want %x", i, v, want)
		}
	}
}
