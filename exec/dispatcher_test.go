package exec

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
)

// recordingLog is a SinkWriter that records what it sees, and what the
// dispatcher's output had received at that moment.
type recordingLog struct {
	out    chan Message
	events []string
}

func (l *recordingLog) Write(_ context.Context, b *Batch) error {
	l.events = append(l.events, fmt.Sprintf("batch %d rows (output holds %d)", b.Rec.NumRows(), len(l.out)))
	return nil
}

func (l *recordingLog) Barrier(_ context.Context, b *barrier.Barrier) error {
	l.events = append(l.events, fmt.Sprintf("barrier %d (output holds %d)", b.Epoch, len(l.out)))
	return nil
}

func (l *recordingLog) Close() {}

// TestDispatcherLog: a dispatcher's log sees each batch before its outputs
// do and each barrier before it is sent on; after SetLog(nil) it sees
// nothing more.
func TestDispatcherLog(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	out := make(chan Message, 10)
	d := NewDispatcher(1)
	d.AddOutputNow(2, out)
	l := &recordingLog{out: out}
	d.SetLog(l)
	batch := func(n int) *Batch {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := range n {
			b.Append(int64(i))
		}
		arr := b.NewArray()
		defer arr.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}}, nil)
		return NewBatch(array.NewRecordBatch(schema, []arrow.Array{arr}, int64(n)), nil)
	}
	for _, m := range []Message{{Batch: batch(3)}, {Barrier: &barrier.Barrier{Epoch: 5}}} {
		if err := d.Emit(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	d.SetLog(nil)
	if err := d.Emit(ctx, Message{Batch: batch(2)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"batch 3 rows (output holds 0)", "barrier 5 (output holds 1)"}
	if fmt.Sprint(l.events) != fmt.Sprint(want) {
		t.Fatalf("log saw %q, want %q", l.events, want)
	}
	if len(out) != 3 {
		t.Fatalf("output got %d messages, want 3", len(out))
	}
	for len(out) > 0 {
		if m := <-out; m.Batch != nil {
			m.Batch.Release()
		}
	}
}

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
