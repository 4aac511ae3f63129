package exec

import (
	"bytes"
	"context"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Windowed TopN.
//
// When the first group column carries a watermark (TopNSpec.Watermark set:
// a TopN per window_start, or DISTINCT ON a window column), the groups below
// the watermark are final. The TopN then drops, and counts as late, the rows
// of such groups (and, emitting on window close, rows whose group column is
// NULL); at each barrier, after emitting the epoch's changes, it deletes the
// final groups' state (a prefix of its state table, keyed by group key
// first after the virtual node: a key range of each virtual node the TopN
// owns) and forwards the watermark on that column. Emitting on window
// close, it emits nothing while groups change and, at each barrier, the
// window of each group that became final as Inserts: the output is
// append-only. The watermark reached is kept in the Watermark table
// (groupWatermark).

// OnWatermark records a watermark on the first group column; the TopN acts
// on it at the next barrier.
func (t *TopN) OnWatermark(_ context.Context, w *barrier.Watermark, _ Output) error {
	if t.wm != nil {
		t.wm.observe(w)
	}
	return nil
}

// dropLate returns b without the rows of final groups.
func (t *TopN) dropLate(b *Batch) (*Batch, error) {
	if t.wm == nil {
		return b, nil
	}
	return t.wm.dropLate(t.mem, b, t.spec.EmitOnWindowClose, t.spec.LateRows)
}

// closeGroups runs after the epoch's changes are emitted: it emits the
// windows of the groups that became final (on window close), deletes their
// state and forwards the watermark (at every barrier, so that views created
// later over this one get it too).
func (t *TopN) closeGroups(ctx context.Context, out Output) error {
	if t.wm == nil || !t.wm.valid {
		return nil
	}
	if lower, upper, ok := t.wm.finalRange(); ok {
		if t.spec.EmitOnWindowClose {
			if err := t.emitFinal(ctx, lower, upper, out); err != nil {
				return err
			}
		}
		t.spec.Table.DeleteRangeVNodes(t.spec.VNodes, lower, upper)
		for key, g := range t.groups {
			if gk := key[state.VNodePrefixLen:]; gk >= string(lower) && gk < string(upper) {
				t.drop(g)
			}
		}
		t.wm.dropped()
	}
	return out.Emit(ctx, t.wm.message(t.spec.GroupCols[0]))
}

// emitFinal emits the window of every group whose group key is in [lower,
// upper) as Inserts, virtual node by virtual node.
func (t *TopN) emitFinal(ctx context.Context, lower, upper []byte, out Output) error {
	it, err := t.spec.Table.NewIter(nil, nil)
	if err != nil {
		return err
	}
	var groups [][]byte
	var lo, hi []byte
	for v := t.spec.VNodes.Lo; v < t.spec.VNodes.Hi; v++ {
		lo = append(state.AppendVNode(lo[:0], v), lower...)
		hi = append(state.AppendVNode(hi[:0], v), upper...)
		it.SetBounds(lo, hi)
		for ok := it.First(); ok; ok = it.Next() {
			n, err := t.groupKeyLen(it.Key())
			if err != nil {
				it.Close()
				return err
			}
			if len(groups) == 0 || !bytes.Equal(groups[len(groups)-1], it.Key()[:n]) {
				groups = append(groups, append([]byte(nil), it.Key()[:n]...))
			}
		}
	}
	err = it.Error()
	it.Close()
	if err != nil {
		return err
	}
	t.dels, t.pairs, t.ins = t.dels[:0], t.pairs[:0], t.ins[:0]
	for _, key := range groups {
		if t.ins, err = t.window(t.group(key), t.ins); err != nil {
			return err
		}
	}
	err = t.emit(ctx, out)
	clear(t.ins)
	return err
}

// groupKeyLen returns the length of the virtual node and group key at the
// start of a state key (see encode: the state key encoding of each group
// column, intervals cut to their span).
func (t *TopN) groupKeyLen(key []byte) (int, error) {
	if len(key) < state.VNodePrefixLen {
		return 0, errCorruptState
	}
	rest := key[state.VNodePrefixLen:]
	for _, c := range t.spec.GroupCols {
		typ := t.spec.Types[c]
		if typ.Kind == types.Interval && len(rest) > 0 && rest[0] == 0x01 {
			if len(rest) < 17 {
				return 0, errCorruptState
			}
			rest = rest[17:]
			continue
		}
		var err error
		if _, rest, err = state.DecodeKeyDatum(rest, typ); err != nil {
			return 0, err
		}
	}
	return len(key) - len(rest), nil
}
