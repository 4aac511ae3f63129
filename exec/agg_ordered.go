package exec

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// valueSetTag follows the group key in the entries that the order-sensitive
// aggregates and approx_count_distinct write into their value set. A
// DISTINCT aggregate's value counts share the table (HashAgg.distinctSigns
// writes group key + value key, whose first byte is a NULL marker, 0x00 or
// 0x01), so the two kinds of entries never collide.
const valueSetTag = 0xFF

// orderedAgg is string_agg, array_agg, jsonb_agg, jsonb_object_agg,
// first_value and last_value: aggregates whose result depends on the order
// of their input, given by the call's ORDER BY. string_agg skips NULL
// values; the others keep them (jsonb_object_agg refuses a NULL key when the
// result is built).
//
// In a streaming aggregation each group's input rows are kept in the value
// set, one entry per row: key group key, valueSetTag, the row's ORDER BY key
// (memcomparable, descending columns inverted), then the row's stream key
// (for DISTINCT, whose rows HashAgg has already reduced to one per value,
// the value's key instead); value the aggregate's inputs (the value, and for
// string_agg the delimiter). An insert is a Put and a retraction a Delete,
// with no read. A group touched in an epoch is recomputed at the barrier
// from its entries in key order: first_value and last_value read one entry
// (one seek), string_agg and array_agg all of them. Rows with equal ORDER BY
// keys (all rows, without an ORDER BY) are ordered by their stream keys;
// distinct values by value, NULL last, as PostgreSQL sorts them (array_agg
// is the DISTINCT aggregate that sees NULL).
//
// In a batch query (insert-only, no value set) the entries are kept in
// memory: the best one so far for first_value and last_value, all of them
// for string_agg and array_agg, sorted when the result is read (equal keys
// keep their input order, as in PostgreSQL). A DISTINCT call has a value set
// in batch queries too, and so takes the streaming path.
type orderedAgg struct {
	fn       string
	distinct bool
	argType  types.T
	set      *state.Table
	groupKey func(slot int32) []byte
	rowKey   func(i int) []byte
	order    []ir.AggOrder
	// extraCols are the input columns of the extra arguments (string_agg's
	// delimiter); codec encodes an entry's value: the argument and the
	// extra arguments.
	extraCols []int
	codec     *state.RowCodec
	valTypes  []types.T
	rec       arrow.RecordBatch

	// cur is the result of each group, valid unless stale.
	cur   []types.Datum
	stale []bool
	// mem holds each group's entries in a batch query.
	mem   [][]memEntry
	arena []byte
	// elems collects array_agg's elements while a result is computed.
	elems []types.Datum

	keyBuf, valBuf, strBuf []byte
	cols                   []arrow.Array
	vals                   []types.Datum
}

// memEntry is an entry kept in memory: key and value alias the arena.
type memEntry struct{ key, val []byte }

func newOrderedAgg(call ir.AggCall, argType types.T, set *state.Table, groupKey func(int32) []byte, rowKey func(int) []byte) *orderedAgg {
	a := &orderedAgg{
		fn: call.Func, distinct: call.Distinct, argType: argType, set: set,
		groupKey: groupKey, rowKey: rowKey, order: call.OrderBy,
	}
	valTypes := []types.T{argType}
	for _, e := range call.ExtraArgs {
		a.extraCols = append(a.extraCols, e.(*ir.InputRef).Index)
		valTypes = append(valTypes, e.Type())
	}
	a.codec = state.NewRowCodec(valTypes)
	a.valTypes = valTypes
	a.cols = make([]arrow.Array, len(valTypes))
	a.vals = make([]types.Datum, len(valTypes))
	return a
}

func (a *orderedAgg) setRecord(rec arrow.RecordBatch) { a.rec = rec }

func (a *orderedAgg) grow(n int) {
	for len(a.cur) < n {
		a.cur = append(a.cur, types.Null)
		a.stale = append(a.stale, false)
		a.mem = append(a.mem, nil)
	}
}

func (a *orderedAgg) reset(slot int32) {
	a.cur[slot], a.stale[slot] = types.Null, false
	a.mem[slot] = a.mem[slot][:0]
}

// appendOrderKey appends the ORDER BY key of row i: per column a byte that
// places NULLs first (0) or last (2) around values (1), then the value's
// memcomparable encoding, inverted for a descending column.
func (a *orderedAgg) appendOrderKey(buf []byte, i int) []byte {
	for _, o := range a.order {
		ref := o.Expr.(*ir.InputRef)
		col := a.rec.Column(ref.Index)
		if col.IsNull(i) {
			if o.NullsFirst {
				buf = append(buf, 0)
			} else {
				buf = append(buf, 2)
			}
			continue
		}
		buf = append(buf, 1)
		start := len(buf)
		buf = state.AppendKey(buf, ref.T, col, i)
		if o.Desc {
			for j := start; j < len(buf); j++ {
				buf[j] = ^buf[j]
			}
		}
	}
	return buf
}

func (a *orderedAgg) update(col arrow.Array, slots []int32, signs []int8) error {
	if a.rec == nil {
		return fmt.Errorf("exec: %s without its input record", a.fn)
	}
	a.cols[0] = col
	for k, c := range a.extraCols {
		a.cols[k+1] = a.rec.Column(c)
	}
	skipNulls := a.fn == ir.AggStringAgg
	for i, s := range signs {
		if s == 0 || (skipNulls && col.IsNull(i)) {
			continue
		}
		slot := slots[i]
		a.valBuf = a.codec.Append(a.valBuf[:0], a.cols, i)
		if a.set == nil {
			if s < 0 {
				return fmt.Errorf("exec: retraction in an insert-only %s", a.fn)
			}
			a.keyBuf = a.appendOrderKey(a.keyBuf[:0], i)
			a.keepInMemory(slot)
			continue
		}
		a.keyBuf = append(a.keyBuf[:0], a.groupKey(slot)...)
		a.keyBuf = append(a.keyBuf, valueSetTag)
		a.keyBuf = a.appendOrderKey(a.keyBuf, i)
		if a.distinct {
			if (a.fn == ir.AggArrayAgg || a.fn == ir.AggJSONBAgg) && col.IsNull(i) {
				// After every value's key (which starts with 0x01).
				a.keyBuf = append(a.keyBuf, 0x02)
			} else {
				a.keyBuf = state.AppendKey(a.keyBuf, a.argType, col, i)
			}
		} else {
			a.keyBuf = append(a.keyBuf, a.rowKey(i)...)
		}
		if s > 0 {
			a.set.Put(a.keyBuf, a.valBuf)
		} else {
			a.set.Delete(a.keyBuf)
		}
		a.stale[slot] = true
	}
	return nil
}

// keepInMemory records the entry in keyBuf/valBuf for a batch query's group.
func (a *orderedAgg) keepInMemory(slot int32) {
	es := a.mem[slot]
	switch {
	case a.keepsAll() || len(es) == 0:
		a.mem[slot] = append(es, memEntry{key: a.store(a.keyBuf), val: a.store(a.valBuf)})
	case a.fn == ir.AggFirstValue && bytes.Compare(a.keyBuf, es[0].key) < 0,
		a.fn == ir.AggLastValue && bytes.Compare(a.keyBuf, es[0].key) > 0:
		// Reuse the entry's bytes when the new ones fit.
		es[0].key = append(es[0].key[:0:cap(es[0].key)], a.keyBuf...)
		es[0].val = append(es[0].val[:0:cap(es[0].val)], a.valBuf...)
	default:
		return
	}
	a.stale[slot] = true
}

// store copies b into the arena.
func (a *orderedAgg) store(b []byte) []byte {
	if cap(a.arena)-len(a.arena) < len(b) {
		a.arena = make([]byte, 0, max(64<<10, len(b)))
	}
	start := len(a.arena)
	a.arena = append(a.arena, b...)
	return a.arena[start:len(a.arena):len(a.arena)]
}

func (a *orderedAgg) prepare(dirty []int32) error {
	for _, slot := range dirty {
		if a.stale[slot] {
			if err := a.recompute(slot); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *orderedAgg) result(slot int32) (types.Datum, error) {
	if a.stale[slot] {
		if err := a.recompute(slot); err != nil {
			return types.Null, err
		}
	}
	return a.cur[slot], nil
}

// recompute sets the group's result from its entries.
func (a *orderedAgg) recompute(slot int32) error {
	a.stale[slot] = false
	a.cur[slot] = types.Null
	if a.set == nil {
		es := a.mem[slot]
		if a.keepsAll() {
			slices.SortStableFunc(es, func(x, y memEntry) int { return bytes.Compare(x.key, y.key) })
		}
		a.strBuf, a.elems = a.strBuf[:0], a.elems[:0]
		for k, e := range es {
			if err := a.fold(slot, k == 0, e.val); err != nil {
				return err
			}
		}
		return a.finish(slot)
	}
	prefix := append(append([]byte(nil), a.groupKey(slot)...), valueSetTag)
	it, err := a.set.NewIter(prefix, state.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	a.strBuf, a.elems = a.strBuf[:0], a.elems[:0]
	switch a.fn {
	case ir.AggFirstValue:
		if it.First() {
			err = a.fold(slot, true, it.Value())
		}
	case ir.AggLastValue:
		if it.Last() {
			err = a.fold(slot, true, it.Value())
		}
	default:
		for ok, first := it.First(), true; ok && err == nil; ok, first = it.Next(), false {
			err = a.fold(slot, first, it.Value())
		}
	}
	if err != nil {
		return err
	}
	if err := it.Error(); err != nil {
		return err
	}
	return a.finish(slot)
}

// fold adds an entry's value to the result being computed: for string_agg
// the value, preceded by its delimiter unless it is the first; for
// array_agg the value as the next element; for the others the value itself.
func (a *orderedAgg) fold(slot int32, first bool, val []byte) error {
	if err := a.codec.DecodeDatums(val, a.vals); err != nil {
		return err
	}
	switch a.fn {
	case ir.AggArrayAgg, ir.AggJSONBAgg, ir.AggJSONBObjectAgg:
		a.elems = append(a.elems, a.vals...)
		a.cur[slot] = types.DArray(nil) // not NULL: a value was seen
		return nil
	}
	if a.fn != ir.AggStringAgg {
		a.cur[slot] = a.vals[0]
		return nil
	}
	if !first && !a.vals[1].Null {
		a.strBuf = append(a.strBuf, a.vals[1].S...)
	}
	a.strBuf = append(a.strBuf, a.vals[0].S...)
	a.cur[slot] = types.DText("") // not NULL: a value was seen
	return nil
}

func (a *orderedAgg) finish(slot int32) error {
	switch {
	case a.cur[slot].Null:
	case a.fn == ir.AggStringAgg:
		a.cur[slot] = types.DText(string(a.strBuf))
	case a.fn == ir.AggArrayAgg:
		a.cur[slot] = types.DArray(slices.Clone(a.elems))
	case a.fn == ir.AggJSONBAgg || a.fn == ir.AggJSONBObjectAgg:
		d, err := a.jsonbResult()
		if err != nil {
			return err
		}
		a.cur[slot] = d
	}
	return nil
}

// jsonbResult builds jsonb_agg's array or jsonb_object_agg's object from
// the collected values (pairs for jsonb_object_agg).
func (a *orderedAgg) jsonbResult() (types.Datum, error) {
	if a.fn == ir.AggJSONBAgg {
		elems := make([]types.JSON, len(a.elems))
		for i, e := range a.elems {
			elems[i] = types.ToJSON(a.argType, e)
		}
		return types.DText(types.JSONText(types.JSONArrayOf(elems))), nil
	}
	if a.argType.Kind == types.Array || a.argType.Kind == types.JSONB {
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "key value must be scalar, not array, composite, or json")
	}
	var ob types.JSONObjectBuilder
	for i := 0; i+1 < len(a.elems); i += 2 {
		k := a.elems[i]
		if k.Null {
			return types.Null, sqlerr.New(sqlerr.NullValueNotAllowed, "field name must not be null")
		}
		key := types.ToJSON(a.argType, k)
		s := key.Str
		if key.Kind == types.JSONBool {
			s = strconv.FormatBool(key.Bool)
		}
		ob.Add(s, types.ToJSON(a.valTypes[1], a.elems[i+1]))
	}
	return types.DText(types.JSONText(ob.Finish())), nil
}

// keepsAll reports whether the aggregate reads every entry of a group (not
// just the first or last).
func (a *orderedAgg) keepsAll() bool {
	switch a.fn {
	case ir.AggFirstValue, ir.AggLastValue:
		return false
	}
	return true
}

// The result is not persisted: a group loaded from state recomputes it
// from its entries when first read.
func (a *orderedAgg) appendState(buf []byte, slot int32) []byte { return buf }
func (a *orderedAgg) loadState(buf []byte, slot int32) ([]byte, error) {
	a.stale[slot] = a.set != nil
	return buf, nil
}
