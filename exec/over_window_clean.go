package exec

import (
	"bytes"

	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// State cleaning of an OverWindow under EMIT ON WINDOW CLOSE.
//
// A window that passes watermarks (planner.Window.PassWatermarks) sits on a
// LateFilter: once watermark w of its first ORDER BY column has arrived, no
// row below w changes again and every later change sorts after the rows
// below w. Later rows read those rows only as context: the carried state of
// the row just before them, the rows their frames and lag reach back to.
// So at each barrier, in every partition that may hold rows below w, the
// rows below w that no row at or above w can reach (winReach.neededBefore,
// with w as the earliest row to come) are deleted: a running sum keeps one
// row per partition, `ROWS 3 PRECEDING` three, `RANGE '1 minute'
// PRECEDING` those within a minute of w. Calls that read back to the
// partition's start without carried state (winReach.backAll) keep
// everything.
//
// Which partitions may hold such rows is known in memory (those changed
// since they were last cleaned up to above their rows); a restarted
// operator first looks at every partition once.
type owCleaner struct {
	on      bool
	wm      int64
	wmValid bool
	// unclean are the partition keys (after their virtual node) that may
	// hold rows to delete; all is
	// set until the first cleaning after a start, which scans every
	// partition.
	unclean map[string]struct{}
	all     bool
	keys    [][]byte
	vals    []types.Datum
	okeys   [][]byte
	arena   []byte
}

// cleans reports whether a window with reach r that passes watermarks can
// drop the rows the watermark leaves behind.
func (r *winReach) cleans() bool { return !r.whole && !r.backAll && !r.fwdAll }

func (c *owCleaner) observe(w int64) {
	if !c.wmValid || w > c.wm {
		c.wm, c.wmValid = w, true
	}
}

// touched records that partition part changed.
func (c *owCleaner) touched(part []byte) {
	if c.on {
		c.unclean[string(part)] = struct{}{}
	}
}

// cleanState deletes, in every partition that may hold them, the rows below
// the watermark that no later row needs.
func (o *OverWindow) cleanState() error {
	c := &o.clean
	if !c.on || !c.wmValid {
		return nil
	}
	if c.all {
		if err := o.collectPartitions(); err != nil {
			return err
		}
		c.all = false
	}
	for part := range c.unclean {
		final, err := o.cleanPartition([]byte(part))
		if err != nil {
			return err
		}
		if final {
			delete(c.unclean, part)
		}
	}
	return nil
}

// collectPartitions marks every stored partition of the operator's virtual
// nodes unclean.
func (o *OverWindow) collectPartitions() error {
	it, err := o.table.NewIter(o.vnodes.Bounds())
	if err != nil {
		return err
	}
	defer it.Close()
	var part []byte
	have := false
	for ok := it.First(); ok; ok = it.Next() {
		if have && bytes.HasPrefix(it.Key(), part) {
			continue
		}
		have = true
		input, _ := splitWindowValue(it.Value())
		vals := o.src.decodeInput(input)
		part = state.AppendVNode(part[:0], 0)
		for j, col := range o.spec.partCols {
			part = appendPartKeyDatum(part, o.spec.partTypes[j], vals[col])
		}
		state.SetVNode(part, len(part))
		o.clean.unclean[string(part)] = struct{}{}
	}
	return it.Error()
}

// cleanPartition deletes the partition's rows below the watermark that no
// later row needs. final reports that the partition holds no row at or
// above the watermark: it needs no cleaning until it changes.
func (o *OverWindow) cleanPartition(part []byte) (final bool, err error) {
	c := &o.clean
	c.keys, c.vals, c.okeys, c.arena = c.keys[:0], c.vals[:0], c.okeys[:0], c.arena[:0]
	it, err := o.table.NewIter(part, state.PrefixEnd(part))
	if err != nil {
		return false, err
	}
	final = true
	first := o.spec.order[0]
	for ok := it.First(); ok; ok = it.Next() {
		input, _ := splitWindowValue(it.Value())
		v := o.src.decodeInput(input)[first.Col]
		if v.Null || v.I >= c.wm {
			final = false
			break
		}
		start := len(c.arena)
		c.arena = append(c.arena, it.Key()...)
		ostart := len(c.arena)
		for _, ord := range o.spec.order {
			c.arena = appendOrderKeyDatum(c.arena, ord, o.src.dec[ord.Col])
		}
		c.keys = append(c.keys, c.arena[start:ostart:ostart])
		c.okeys = append(c.okeys, c.arena[ostart:len(c.arena):len(c.arena)])
		c.vals = append(c.vals, v)
	}
	if err := it.Error(); err != nil {
		it.Close()
		return false, err
	}
	if err := it.Close(); err != nil {
		return false, err
	}
	for _, k := range c.keys[:o.unneeded()] {
		o.table.Delete(k)
	}
	return final, nil
}

// unneeded returns how many of the rows collected by cleanPartition (the
// partition's rows below the watermark, in window order) no row at or above
// the watermark needs: a prefix of them.
func (o *OverWindow) unneeded() int {
	c := &o.clean
	m := len(c.keys)
	if m == 0 {
		return 0
	}
	ref, carried := types.DInt(c.wm), c.vals[m-1]
	g := int64(1)
	for j := m - 1; j >= 0; j-- {
		if j < m-1 && !bytes.Equal(c.okeys[j], c.okeys[j+1]) {
			g++
		}
		if !o.reach.neededBefore(int64(m-j), g, c.vals[j], ref, carried) {
			return j + 1
		}
	}
	return 0
}

// appendPartKeyDatum is appendPartKey for a datum.
func appendPartKeyDatum(buf []byte, t types.T, d types.Datum) []byte {
	buf = state.AppendKeyDatum(buf, t, d)
	if t.Kind == types.Interval && !d.Null {
		buf = buf[:len(buf)-intervalKeyTail]
	}
	return buf
}
