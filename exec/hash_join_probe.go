package exec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/state"
)

// Phase 1 of HashJoin.OnBatch: the stored rows of the other side that share
// each input row's join key, and the pairs they make.

// findCandidates encodes the row key of each of the n rows of rec (input s)
// into j.rowKeys, notes in j.hasKey whether it has a join key without NULLs,
// and returns the candidates of every row in input row order (each row's in
// the order found), with the other side's stored rows they point to decoded
// into a record (the caller releases it). A join key that several rows of
// the batch share is looked up and decoded once.
func (j *HashJoin) findCandidates(s int, rec arrow.RecordBatch, n int) ([]candidate, arrow.RecordBatch, error) {
	j.encodeRowKeys(s, rec, n)
	o := 1 - s
	otherBs := newBuilders(j.mem, j.spec.Types[o])
	defer releaseBuilders(otherBs)
	cands := j.cands[:0]
	decoded := 0
	// Probe in join key order, which walks the other side's state forwards,
	// through one iterator: that state does not change until phase 3.
	slices.SortStableFunc(j.probes, func(a, b probe) int { return bytes.Compare(a.key, b.key) })
	if len(j.probes) > 0 {
		it, err := j.spec.Tables[o].NewIter(nil, nil)
		if err != nil {
			return nil, nil, err
		}
		// Only a preserved side's candidates need their key and stored row
		// after phase 1 (to update its match counts and pad its rows).
		keepStored := preserved(j.spec.Type, o)
		for p := 0; p < len(j.probes); {
			pr := j.probes[p]
			first := len(cands)
			j.endBuf = state.AppendPrefixEnd(j.endBuf[:0], pr.key)
			it.SetBounds(pr.key, j.endBuf)
			for ok := it.First(); ok; ok = it.Next() {
				deg, flags, row, err := decodeStored(it.Value())
				if err == nil {
					err = j.codecs[o].Decode(row, otherBs)
				}
				if err != nil {
					it.Close()
					return nil, nil, err
				}
				c := candidate{row: pr.row, other: int32(decoded), deg: deg, flags: flags}
				decoded++
				if keepStored {
					// Copies into the batch's arena: the iterator reuses its
					// buffers. (Growing the arena leaves earlier copies intact.)
					k0 := len(j.arena)
					j.arena = append(append(j.arena, it.Key()...), row...)
					kv := j.arena[k0:len(j.arena):len(j.arena)]
					klen := len(it.Key())
					c.key, c.value = kv[:klen:klen], kv[klen:]
				}
				if cands, err = j.addCandidate(cands, c); err != nil {
					it.Close()
					return nil, nil, err
				}
			}
			// The later rows with the same join key get the same candidates.
			last := len(cands)
			for p++; p < len(j.probes) && bytes.Equal(j.probes[p].key, pr.key); p++ {
				for q := first; q < last; q++ {
					c := cands[q]
					c.row = j.probes[p].row
					if cands, err = j.addCandidate(cands, c); err != nil {
						it.Close()
						return nil, nil, err
					}
				}
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return nil, nil, err
		}
		cands = j.byRow(cands, n)
	}
	return cands, buildRecord(SchemaOf(j.spec.Types[o]), otherBs, decoded), nil
}

// addCandidate appends c to cands, checking the budget every budgetStride
// candidates.
func (j *HashJoin) addCandidate(cands []candidate, c candidate) ([]candidate, error) {
	cands = append(cands, c)
	if len(cands)%budgetStride == 0 {
		if err := j.checkBudget(cands); err != nil {
			return cands, err
		}
	}
	return cands, nil
}

// encodeRowKeys encodes the row keys (virtual node, join key, stream key or
// sequence number) of the n rows of rec, input s, into j.rowKeys, sets
// j.hasKey, and lists the rows with a join key in j.probes.
func (j *HashJoin) encodeRowKeys(s int, rec arrow.RecordBatch, n int) {
	spec := &j.spec
	j.arena = j.arena[:0] // the last batch's row keys and candidates are dead
	j.rowKeys = j.rowKeys[:0]
	j.probes = j.probes[:0]
	j.hasKey = slices.Grow(j.hasKey[:0], n)[:n]
	for i := 0; i < n; i++ {
		j.keyBuf = state.AppendVNode(j.keyBuf[:0], 0)
		j.hasKey[i] = true
		for k, c := range spec.Keys[s] {
			col := rec.Column(c)
			if col.IsNull(i) {
				j.hasKey[i] = false
			}
			j.keyBuf = state.AppendKey(j.keyBuf, spec.KeyTypes[k], col, i)
		}
		jkLen := len(j.keyBuf)
		j.keyBuf = setPartitionVNode(j.keyBuf, spec.KeyTypes, rec, spec.Keys[s], i)
		for _, c := range spec.StreamKeys[s] {
			j.keyBuf = state.AppendKey(j.keyBuf, spec.Types[s][c], rec.Column(c), i)
		}
		if spec.Sequence[s] {
			j.seq++
			j.keyBuf = binary.BigEndian.AppendUint64(j.keyBuf, j.seq)
		}
		k0 := len(j.arena)
		j.arena = append(j.arena, j.keyBuf...)
		j.rowKeys = append(j.rowKeys, j.arena[k0:len(j.arena):len(j.arena)])
		if j.hasKey[i] {
			j.probes = append(j.probes, probe{row: i, key: j.rowKeys[i][:jkLen]})
		}
	}
}

// pairRecord gathers the candidate pairs into one record of the pair types
// (left columns, then right): input row cands[q].row of rec (input s) with
// row cands[q].other of other. A side whose rows are already in candidate
// order is shared, not copied. The caller releases the record.
func (j *HashJoin) pairRecord(s int, rec, other arrow.RecordBatch, cands []candidate) (arrow.RecordBatch, error) {
	inRows := slices.Grow(j.inRows[:0], len(cands))[:len(cands)]
	otherRows := slices.Grow(j.otherRows[:0], len(cands))[:len(cands)]
	for q, c := range cands {
		inRows[q], otherRows[q] = int32(c.row), c.other
	}
	j.inRows, j.otherRows = inRows, otherRows
	sides := [2]arrow.RecordBatch{rec, other}
	rows := [2][]int32{inRows, otherRows}
	if s == 1 {
		sides[0], sides[1] = other, rec
		rows[0], rows[1] = otherRows, inRows
	}
	cols := make([]arrow.Array, 0, len(j.pairTypes))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for side := 0; side < 2; side++ {
		for c := 0; c < int(sides[side].NumCols()); c++ {
			col, err := j.takeOrShare(sides[side].Column(c), rows[side])
			if err != nil {
				return nil, err
			}
			cols = append(cols, col)
		}
	}
	return array.NewRecordBatch(SchemaOf(j.pairTypes), cols, int64(len(cands))), nil
}

// takeOrShare returns arr's values at rows: arr itself (retained) when rows
// are 0..len(arr)-1, else a copy.
func (j *HashJoin) takeOrShare(arr arrow.Array, rows []int32) (arrow.Array, error) {
	if isIdentity(rows, arr.Len()) {
		arr.Retain()
		return arr, nil
	}
	return eval.TakeArray(j.mem, arr, rows)
}

// isIdentity reports whether rows are 0, 1, ..., n-1.
func isIdentity(rows []int32, n int) bool {
	if len(rows) != n {
		return false
	}
	for i, r := range rows {
		if r != int32(i) {
			return false
		}
	}
	return true
}
