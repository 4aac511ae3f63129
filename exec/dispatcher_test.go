package exec

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDispatcherSharedStructBatch sends a batch whose struct column is a
// slice (its fields' null counts unknown) to two outputs read on two
// goroutines; under the race detector, reading the fields' null counts
// there must not race (Arrow stores a computed count on first use).
func TestDispatcherSharedStructBatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	b := array.NewStructBuilder(mem, st)
	for i := 0; i < 64; i++ {
		b.Append(true)
		if i%3 == 0 {
			b.FieldBuilder(0).AppendNull()
		} else {
			b.FieldBuilder(0).(*array.Int64Builder).Append(int64(i))
		}
	}
	whole := b.NewStructArray()
	b.Release()
	part := array.NewSlice(whole, 5, 50)
	whole.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{part}, int64(part.Len()))
	part.Release()

	d := NewDispatcher(1)
	outs := []chan Message{make(chan Message, 1), make(chan Message, 1)}
	for i, ch := range outs {
		d.AddOutputNow(uint32(i+2), ch)
	}
	if err := d.Emit(context.Background(), Message{Batch: NewBatch(rec, nil)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	nulls := make([]int, len(outs))
	for i, ch := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := <-ch
			defer m.Release()
			nulls[i] = m.Batch.Rec.Column(0).(*array.Struct).Field(0).NullN()
		}()
	}
	wg.Wait()
	if nulls[0] != nulls[1] || nulls[0] == 0 {
		t.Fatalf("null counts %v", nulls)
	}
}
