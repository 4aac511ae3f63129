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
	mem  memory.Allocator
	outs []chan Message
	// sent is the epoch of the last barrier sent to each output.
	sent []uint64
	part partitioner
	rows [][]int32 // per output, the rows it gets
}

// partitioner computes which of n actors owns each row of a batch: the
// owner of the virtual node of the row's key columns.
type partitioner struct {
	keys     []int
	types    []types.T
	n        int
	enc      *state.KeyEncoder // nil unless every key type is columnarKey
	keyBuf   []byte
	keyCols  []arrow.Array
	owner    []int32 // per row of the last batch
	vnodeOwn [state.VNodeCount]int32
}

func newPartitioner(keys []int, ts []types.T, n int) partitioner {
	p := partitioner{keys: keys, types: ts, n: n}
	columnar := true
	for _, t := range ts {
		columnar = columnar && columnarKey(t)
	}
	if columnar {
		p.enc = state.NewKeyEncoder(ts)
	}
	for v := range p.vnodeOwn {
		p.vnodeOwn[v] = int32(state.VNodeOwner(uint16(v), n))
	}
	return p
}

// NewExchange returns an exchange of the rows of batches on key columns keys
// (of types ts) to outs, one channel per downstream actor; the i-th owns
// the virtual nodes state.VNodeRange(i, len(outs)).
func NewExchange(mem memory.Allocator, keys []int, ts []types.T, outs []chan Message) *Exchange {
	return &Exchange{mem: mem, outs: outs, sent: make([]uint64, len(outs)), rows: make([][]int32, len(outs)),
		part: newPartitioner(keys, ts, len(outs))}
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
	owner := x.part.owners(b.Rec)
	for i := range x.rows {
		x.rows[i] = x.rows[i][:0]
	}
	for r, o := range owner {
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

// owners returns the owner of each row of rec, valid until the next call.
func (p *partitioner) owners(rec arrow.RecordBatch) []int32 {
	n := int(rec.NumRows())
	if cap(p.owner) < n {
		p.owner = make([]int32, n)
	}
	p.owner = p.owner[:n]
	if p.n == 1 {
		clear(p.owner)
		return p.owner
	}
	if len(p.keys) == 0 {
		// An empty key (a view of at most one row): every row to the owner
		// of the empty key's virtual node.
		own := p.vnodeOwn[state.VNode(nil)]
		for r := range p.owner {
			p.owner[r] = own
		}
		return p.owner
	}
	p.keyCols = p.keyCols[:0]
	for _, k := range p.keys {
		p.keyCols = append(p.keyCols, rec.Column(k))
	}
	if p.enc != nil {
		p.enc.Encode(p.keyCols)
		for r := range p.owner {
			p.owner[r] = p.vnodeOwn[state.VNode(p.enc.Key(r))]
		}
		return p.owner
	}
	// Intervals: equal intervals (PostgreSQL's '1 day' = '24 hours') must
	// meet, as in the operators' equality keys. Arrays, structs, jsonb:
	// AppendKey's encodings, row by row.
	for r := range p.owner {
		p.keyBuf = p.keyBuf[:0]
		for j, col := range p.keyCols {
			p.keyBuf = state.AppendEqualKey(p.keyBuf, p.types[j], col, r)
		}
		p.owner[r] = p.vnodeOwn[state.VNode(p.keyBuf)]
	}
	return p.owner
}

// Close closes the output channels: the actors reading them see their
// inputs end.
func (x *Exchange) Close() {
	for _, ch := range x.outs {
		close(ch)
	}
	x.outs = nil
}

// columnarKey reports whether state.KeyEncoder encodes keys of type t in
// the bytes the operators' equality keys have.
func columnarKey(t types.T) bool {
	switch t.Kind {
	case types.Bool, types.Int16, types.Int32, types.Int64, types.Date, types.Timestamp, types.TimestampTZ,
		types.Float32, types.Float64, types.Numeric, types.UUID, types.Text, types.Bytea:
		return true
	}
	return false
}
