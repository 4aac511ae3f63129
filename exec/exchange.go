package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Exchange ends a fragment whose next fragment runs as several actors: it
// sends each row of a batch to the actor owning the row's virtual node (the
// state.VNode of its partition key columns), and every barrier and
// watermark to all of them. Rows keep their order per actor, so the changes
// of one key reach its actor in the order they were made. An update pair
// whose halves go to different actors arrives as a delete and an insert.
//
// An Exchange is an Output driven by one goroutine (its actor); it owns its
// output channels and closes them in Close, after which it must not be
// used. Sends block while a channel is full (backpressure).
type Exchange struct {
	mem   memory.Allocator
	keys  []int
	types []types.T
	outs  []chan Message
	// sent is the epoch of the last barrier sent to each output.
	sent []uint64

	enc      *state.KeyEncoder // nil if a key is an interval (see owners)
	keyBuf   []byte
	keyCols  []arrow.Array
	owner    []int32   // per row of the current batch
	rows     [][]int32 // per output, the rows it gets
	vnodeOwn [state.VNodeCount]int32
}

// NewExchange returns an exchange of the rows of batches on key columns keys
// (of types ts) to outs, one channel per downstream actor; the i-th owns
// the virtual nodes state.VNodeRange(i, len(outs)).
func NewExchange(mem memory.Allocator, keys []int, ts []types.T, outs []chan Message) *Exchange {
	x := &Exchange{mem: mem, keys: keys, types: ts, outs: outs, sent: make([]uint64, len(outs)), rows: make([][]int32, len(outs))}
	interval := false
	for _, t := range ts {
		interval = interval || t.Kind == types.Interval
	}
	if !interval {
		x.enc = state.NewKeyEncoder(ts)
	}
	for v := range x.vnodeOwn {
		x.vnodeOwn[v] = int32(state.VNodeOwner(uint16(v), len(outs)))
	}
	return x
}

// Emit sends m on: a batch split by owner, anything else to every output.
func (x *Exchange) Emit(ctx context.Context, m Message) error {
	if m.Batch != nil {
		return x.emitBatch(ctx, m.Batch)
	}
	if b := m.Barrier; b != nil {
		for i := range x.outs {
			x.sent[i] = b.Epoch
			if err := send(ctx, x.outs[i], m); err != nil {
				return err
			}
		}
		return nil
	}
	if m.EndOfStream {
		return nil // Close closes the channels
	}
	for _, ch := range x.outs {
		if err := send(ctx, ch, m); err != nil {
			return err
		}
	}
	return nil
}

// ForwardBarrier sends b to the outputs that have not had it: a failed
// actor's barriers still reach the actors after it, so that they keep
// aligning and acknowledging.
func (x *Exchange) ForwardBarrier(ctx context.Context, b *barrier.Barrier) error {
	for i, ch := range x.outs {
		if x.sent[i] < b.Epoch {
			x.sent[i] = b.Epoch
			if err := send(ctx, ch, Message{Barrier: b}); err != nil {
				return err
			}
		}
	}
	return nil
}

// emitBatch sends each output its rows of b, which it takes over.
func (x *Exchange) emitBatch(ctx context.Context, b *Batch) error {
	defer b.Release()
	x.computeOwners(b.Rec)
	for i := range x.rows {
		x.rows[i] = x.rows[i][:0]
	}
	for r, o := range x.owner {
		x.rows[o] = append(x.rows[o], int32(r))
	}
	for i, rows := range x.rows {
		if len(rows) == 0 {
			continue
		}
		var out *Batch
		if len(rows) == b.Len() {
			b.Rec.Retain()
			out = &Batch{Rec: b.Rec, Ops: b.Ops}
		} else {
			rec, err := eval.TakeRecord(x.mem, b.Rec, rows)
			if err != nil {
				return err
			}
			ops := make([]Op, len(rows))
			for j, r := range rows {
				ops[j] = b.Ops[r]
			}
			fixUpdatePairs(ops, rows)
			out = NewBatch(rec, ops)
		}
		if err := send(ctx, x.outs[i], Message{Batch: out}); err != nil {
			out.Release()
			return err
		}
	}
	return nil
}

// computeOwners sets x.owner to the output of each row of rec.
func (x *Exchange) computeOwners(rec arrow.RecordBatch) {
	n := int(rec.NumRows())
	if cap(x.owner) < n {
		x.owner = make([]int32, n)
	}
	x.owner = x.owner[:n]
	if len(x.outs) == 1 {
		clear(x.owner)
		return
	}
	x.keyCols = x.keyCols[:0]
	for _, k := range x.keys {
		x.keyCols = append(x.keyCols, rec.Column(k))
	}
	if x.enc != nil {
		x.enc.Encode(x.keyCols)
		for r := range x.owner {
			x.owner[r] = x.vnodeOwn[state.VNode(x.enc.Key(r))]
		}
		return
	}
	// Interval keys: equal intervals (PostgreSQL's '1 day' = '24 hours')
	// must meet, as in the operators' equality keys.
	for r := range x.owner {
		x.keyBuf = x.keyBuf[:0]
		for j, col := range x.keyCols {
			x.keyBuf = state.AppendEqualKey(x.keyBuf, x.types[j], col, r)
		}
		x.owner[r] = x.vnodeOwn[state.VNode(x.keyBuf)]
	}
}

// Close closes the output channels: the actors reading them see their
// inputs end.
func (x *Exchange) Close() {
	for _, ch := range x.outs {
		close(ch)
	}
	x.outs = nil
}
