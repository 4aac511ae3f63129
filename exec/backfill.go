package exec

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Backfill sits at the entry of one input of a new view's dataflow, the
// input of an upstream table or view, and feeds the dataflow the upstream's
// existing rows without stopping the barriers that pass through it.
//
// It holds a position: the last upstream key (in the upstream state table's
// key order) whose row it has emitted. The input's changes are passed on only
// for keys <= position; changes to larger keys are dropped, because the rows
// they leave will be read later. At each barrier n it reads the next chunk of
// the upstream's rows after the position, as of the end of epoch n
// (Table.NewSealedIter: everything sealed up to barrier n, which the upstream
// has sealed before sending the barrier), emits them as inserts, advances
// the position and writes it to its state table, then passes the barrier on.
// So at every barrier the dataflow has seen exactly the upstream's rows with
// keys <= position, and the state of the view is the view of that part of
// the upstream. When a read reaches the end of the upstream, the backfill
// records that it is done and passes everything on from then on.
//
// Watermarks are held while it backfills (rows it emits later may be older)
// and the last of each column is passed on when it is done, after the last
// chunk and before the barrier that ends the backfill.
//
// Its state is one key per input ([input]) in a table shared by the
// dataflow's backfills; they run on the actor's goroutine, which seals the
// table once a barrier has arrived on every input, as for the pause gates.
// A backfill created over a stored position (after a restart) resumes after
// it.
//
// A chunk ends after ChunkRows rows or once reading it took Budget, so that
// a barrier is held back by at most about Budget.
type Backfill struct {
	cfg      BackfillConfig
	codec    *state.RowCodec
	schema   *arrow.Schema
	pos      []byte // nil before the first row
	done     bool
	keyBuf   []byte
	valBuf   []byte
	sel      []int32
	held     []*barrier.Watermark
	Progress *BackfillProgress
}

// BackfillConfig configures a Backfill.
type BackfillConfig struct {
	Mem memory.Allocator
	// Input is the dataflow input the backfill feeds, its key in State.
	Input int
	// Upstream is the upstream relation's state table, of rows of Types
	// (RowCodec) keyed by the Key columns (state.AppendKey). It is owned by
	// another goroutine and only read with NewSealedIter.
	Upstream *state.Table
	Types    []types.T
	Key      []int
	// State holds the position (see Backfill).
	State *state.Table
	// ChunkRows and Budget bound the rows read at one barrier (defaults
	// 65536 rows and 100ms).
	ChunkRows int
	Budget    time.Duration
	// OnDone, if set, is called when the backfill is done, at barrier epoch
	// (its done state belongs to that epoch), before the barrier is passed on.
	OnDone func(epoch uint64)
	Next   Output
}

// BackfillProgress is what a backfill has done so far. It is written by the
// actor's goroutine and may be read from any goroutine.
type BackfillProgress struct {
	// Rows counts the upstream rows emitted, over restarts.
	Rows atomic.Int64
	Done atomic.Bool
}

// NewBackfill returns the backfill of cfg.Input, resuming from the position
// stored in cfg.State if there is one.
func NewBackfill(cfg BackfillConfig) (*Backfill, error) {
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = 65536
	}
	if cfg.Budget <= 0 {
		cfg.Budget = 100 * time.Millisecond
	}
	f := &Backfill{cfg: cfg, codec: state.NewRowCodec(cfg.Types), schema: SchemaOf(cfg.Types), Progress: &BackfillProgress{}}
	v, ok, err := cfg.State.Get(f.stateKey())
	if err != nil {
		return nil, err
	}
	if ok {
		if err := f.decodeState(v); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Done reports whether the backfill has read the whole upstream.
func (f *Backfill) Done() bool { return f.done }

func (f *Backfill) stateKey() []byte { return []byte{byte(f.cfg.Input)} }

// The stored state is a status byte (0 backfilling, 1 done), the rows
// emitted (uvarint) and the position (the rest; absent before the first row).
func (f *Backfill) decodeState(v []byte) error {
	if len(v) < 2 || v[0] > 1 {
		return fmt.Errorf("exec: backfill of input %d: corrupt state %x", f.cfg.Input, v)
	}
	rows, n := binary.Uvarint(v[1:])
	if n <= 0 {
		return fmt.Errorf("exec: backfill of input %d: corrupt state %x", f.cfg.Input, v)
	}
	f.done = v[0] == 1
	f.Progress.Done.Store(f.done)
	f.Progress.Rows.Store(int64(rows))
	if rest := v[1+n:]; len(rest) > 0 || rows > 0 {
		f.pos = append([]byte{}, rest...)
	}
	return nil
}

func (f *Backfill) writeState() {
	status := byte(0)
	if f.done {
		status = 1
	}
	f.valBuf = append(f.valBuf[:0], status)
	f.valBuf = binary.AppendUvarint(f.valBuf, uint64(f.Progress.Rows.Load()))
	f.valBuf = append(f.valBuf, f.pos...)
	f.cfg.State.Put(f.stateKey(), f.valBuf)
}

// Emit passes m on, or filters or holds it while backfilling.
func (f *Backfill) Emit(ctx context.Context, m Message) error {
	if f.done {
		return f.cfg.Next.Emit(ctx, m)
	}
	switch {
	case m.Batch != nil:
		return f.onBatch(ctx, m.Batch)
	case m.Barrier != nil:
		return f.onBarrier(ctx, m.Barrier)
	case m.Watermark != nil:
		f.hold(m.Watermark)
		return nil
	}
	return f.cfg.Next.Emit(ctx, m)
}

// onBatch passes on the rows of b with keys <= position.
func (f *Backfill) onBatch(ctx context.Context, b *Batch) error {
	defer b.Release()
	if f.pos == nil {
		return nil
	}
	f.sel = f.sel[:0]
	cols := b.Rec.Columns()
	for i := range b.Ops {
		f.keyBuf = f.keyBuf[:0]
		for _, k := range f.cfg.Key {
			f.keyBuf = state.AppendKey(f.keyBuf, f.cfg.Types[k], cols[k], i)
		}
		if bytes.Compare(f.keyBuf, f.pos) <= 0 {
			f.sel = append(f.sel, int32(i))
		}
	}
	if len(f.sel) == 0 {
		return nil
	}
	ops := make([]Op, len(f.sel))
	for i, r := range f.sel {
		ops[i] = b.Ops[r]
	}
	fixUpdatePairs(ops, f.sel)
	if len(f.sel) == b.Len() {
		b.Rec.Retain()
		return f.cfg.Next.Emit(ctx, Message{Batch: NewBatch(b.Rec, ops)})
	}
	rec, err := eval.TakeRecord(f.cfg.Mem, b.Rec, f.sel)
	if err != nil {
		return err
	}
	return f.cfg.Next.Emit(ctx, Message{Batch: NewBatch(rec, ops)})
}

// onBarrier emits the next chunk of the upstream as of b's epoch, stores the
// position and passes b on.
func (f *Backfill) onBarrier(ctx context.Context, b *barrier.Barrier) error {
	if err := f.readChunk(ctx, b.Epoch); err != nil {
		return err
	}
	f.writeState()
	if f.done && f.cfg.OnDone != nil {
		f.cfg.OnDone(b.Epoch)
	}
	if f.done {
		// Every upstream row has now been emitted: the held watermarks go
		// before the barrier, so that what they close (windows emitted on
		// close) is in the epoch the backfill completes.
		held := f.held
		f.held = nil
		for _, w := range held {
			if err := f.cfg.Next.Emit(ctx, Message{Watermark: w}); err != nil {
				return err
			}
		}
	}
	return f.cfg.Next.Emit(ctx, Message{Barrier: b})
}

// readChunk emits up to a chunk of upstream rows after the position, as of
// epoch, and advances the position; it sets done at the upstream's end.
func (f *Backfill) readChunk(ctx context.Context, epoch uint64) error {
	var lower []byte
	if f.pos != nil {
		lower = append(append([]byte{}, f.pos...), 0) // the next key after pos
	}
	it, err := f.cfg.Upstream.NewSealedIter(epoch, lower, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	bs := newBuilders(f.cfg.Mem, f.cfg.Types)
	defer releaseBuilders(bs)
	start := time.Now()
	n, inBatch := 0, 0
	flush := func() error {
		if inBatch == 0 {
			return nil
		}
		rec := buildRecord(f.schema, bs, inBatch)
		f.Progress.Rows.Add(int64(inBatch))
		inBatch = 0
		return f.cfg.Next.Emit(ctx, Message{Batch: NewBatch(rec, nil)})
	}
	ok := it.First()
	for ; ok; ok = it.Next() {
		if err := f.codec.Decode(it.Value(), bs); err != nil {
			return err
		}
		f.pos = append(f.pos[:0], it.Key()...)
		n++
		inBatch++
		if inBatch == BatchSize {
			if err := flush(); err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if n >= f.cfg.ChunkRows || (n%256 == 0 && time.Since(start) >= f.cfg.Budget) {
			break
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if !ok {
		f.done = true
	}
	if err := flush(); err != nil {
		return err
	}
	if f.done {
		f.Progress.Done.Store(true)
	}
	return nil
}

// hold keeps w as the last watermark of its column.
func (f *Backfill) hold(w *barrier.Watermark) {
	for i, h := range f.held {
		if h.Column == w.Column {
			f.held[i] = w
			return
		}
	}
	f.held = append(f.held, w)
}
