package exec

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// PauseView is a barrier mutation: after the barrier, the dataflow of view
// View stops processing its inputs' changes and keeps them (see PauseGate).
type PauseView struct{ View uint32 }

// ResumeView is a barrier mutation: after the barrier, the dataflow of view
// View processes the changes it kept while paused, in order, then goes on.
type ResumeView struct{ View uint32 }

func (m *PauseView) String() string  { return fmt.Sprintf("pause(view %d)", m.View) }
func (m *ResumeView) String() string { return fmt.Sprintf("resume(view %d)", m.View) }

// PauseGate sits at the entry of one input of a view's dataflow. While the
// view runs, it passes everything on. While the view is paused, it writes the
// input's changes to a state table in arrival order instead (so they are
// part of every checkpoint, and a paused view survives restarts without
// loss) and passes only barriers, so the view keeps acknowledging epochs and
// the views built on it keep running on its unchanged rows. On resume it
// replays the kept changes, then passes changes on again.
//
// All the gates of one dataflow share the buffer table (keys start with the
// input number); they run on the actor's goroutine, which seals the table once
// a barrier has arrived on every input (not the gates: an input's changes
// before its barrier belong to the epoch even if another input's barrier came
// first).
type PauseGate struct {
	mem    memory.Allocator
	view   uint32
	input  uint8
	next   Output
	buf    *state.Table
	types  []types.T
	codec  *state.RowCodec
	paused bool
	seq    uint64
	key    []byte
	val    []byte
	// heldWatermark is the last watermark that arrived while paused.
	heldWatermark *barrier.Watermark
}

// NewPauseGate returns the gate of input of view, passing to next. buf holds
// kept changes; paused is the view's state at start.
func NewPauseGate(mem memory.Allocator, view uint32, input int, next Output, buf *state.Table, ts []types.T, paused bool) (*PauseGate, error) {
	g := &PauseGate{mem: mem, view: view, input: uint8(input), next: next, buf: buf, types: ts, codec: state.NewRowCodec(ts), paused: paused}
	if paused {
		// Continue numbering after the changes already kept.
		it, err := buf.NewIter([]byte{g.input}, []byte{g.input + 1})
		if err != nil {
			return nil, err
		}
		if it.Last() {
			g.seq = binary.BigEndian.Uint64(it.Key()[1:]) + 1
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// Emit passes m on, or keeps it while paused.
func (g *PauseGate) Emit(ctx context.Context, m Message) error {
	switch {
	case m.Batch != nil && g.paused:
		defer m.Batch.Release()
		cols := m.Batch.Rec.Columns()
		for i, op := range m.Batch.Ops {
			g.key = binary.BigEndian.AppendUint64(append(g.key[:0], g.input), g.seq)
			g.seq++
			g.val = g.codec.Append(append(g.val[:0], byte(op)), cols, i)
			g.buf.Put(g.key, g.val)
		}
		return nil
	case m.Watermark != nil && g.paused:
		// Rows kept while paused must not turn late: the watermark waits
		// for them (the latest one is enough).
		g.heldWatermark = m.Watermark
		return nil
	case m.Barrier != nil:
		if err := g.next.Emit(ctx, m); err != nil {
			return err
		}
		for _, mu := range m.Barrier.Mutations {
			switch mu := mu.(type) {
			case *PauseView:
				if mu.View == g.view {
					g.paused = true
				}
			case *ResumeView:
				if mu.View == g.view && g.paused {
					g.paused = false
					if err := g.replay(ctx); err != nil {
						return err
					}
					if w := g.heldWatermark; w != nil {
						g.heldWatermark = nil
						if err := g.next.Emit(ctx, Message{Watermark: w}); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	}
	return g.next.Emit(ctx, m)
}

// replay emits the kept changes in order and removes them.
func (g *PauseGate) replay(ctx context.Context) error {
	lower, upper := []byte{g.input}, []byte{g.input + 1}
	it, err := g.buf.NewIter(lower, upper)
	if err != nil {
		return err
	}
	bs := newBuilders(g.mem, g.types)
	defer releaseBuilders(bs)
	schema := SchemaOf(g.types)
	var ops []Op
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		b := NewBatch(buildRecord(schema, bs, len(ops)), ops)
		ops = nil
		return g.next.Emit(ctx, Message{Batch: b})
	}
	for ok := it.First(); ok; ok = it.Next() {
		v := it.Value()
		if len(v) == 0 {
			it.Close()
			return errCorruptState
		}
		ops = append(ops, Op(v[0]))
		if err := g.codec.Decode(v[1:], bs); err != nil {
			it.Close()
			return err
		}
		if len(ops) == BatchSize {
			if err := flush(); err != nil {
				it.Close()
				return err
			}
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	g.buf.DeleteRange(lower, upper)
	g.seq = 0
	return nil
}
