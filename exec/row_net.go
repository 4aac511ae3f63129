package exec

import (
	"bytes"
	"context"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// rowNet nets the changes of a run of batches per distinct row: each row's
// count is its inserts minus its deletes. It is the core of Consolidate and
// NetChanges.
//
// The distinct rows are encoded into one arena, in order of first change,
// and found again through a hash of their encoding; adding a batch
// allocates nothing per row once the arena and the index have grown to the
// run's size, and reset keeps that size for the next run. A rowNet is used
// by one goroutine.
type rowNet struct {
	codec  *state.RowCodec
	seed   maphash.Seed
	arena  []byte           // the distinct rows' encodings, back to back
	ends   []int            // row i is arena[ends[i-1]:ends[i]]
	counts []int64          // row i's net count
	next   []int32          // the next row of row i's hash chain, or -1
	heads  map[uint64]int32 // hash of an encoding -> its chain's first row
	buf    []byte
}

func newRowNet(ts []types.T) rowNet {
	return rowNet{codec: state.NewRowCodec(ts), seed: maphash.MakeSeed(), heads: map[uint64]int32{}}
}

// rowOverhead is what a distinct row costs beside its encoding: its end,
// count, chain link and index entry.
const rowOverhead = 40

// add counts the rows of cols with their ops and returns the number of
// rows it had not seen before and the bytes of their encodings.
func (r *rowNet) add(cols []arrow.Array, ops []Op) (newRows, newBytes int) {
	for i, op := range ops {
		r.buf = r.codec.Append(r.buf[:0], cols, i)
		d := int64(-1)
		if op.IsInsert() {
			d = 1
		}
		j, fresh := r.find(r.buf)
		if fresh {
			newRows++
			newBytes += len(r.buf)
		}
		r.counts[j] += d
	}
	return newRows, newBytes
}

// find returns the index of row k, adding it with count 0 if new.
func (r *rowNet) find(k []byte) (int32, bool) {
	h := maphash.Bytes(r.seed, k)
	head, ok := r.heads[h]
	if ok {
		for j := head; j >= 0; j = r.next[j] {
			if bytes.Equal(r.row(int(j)), k) {
				return j, false
			}
		}
	} else {
		head = -1
	}
	j := int32(len(r.counts))
	r.arena = append(r.arena, k...)
	r.ends = append(r.ends, len(r.arena))
	r.counts = append(r.counts, 0)
	r.next = append(r.next, head)
	r.heads[h] = j
	return j, true
}

// row returns the encoding of row i; it is valid until reset.
func (r *rowNet) row(i int) []byte {
	lo := 0
	if i > 0 {
		lo = r.ends[i-1]
	}
	return r.arena[lo:r.ends[i]]
}

// len returns the number of distinct rows.
func (r *rowNet) len() int { return len(r.counts) }

// reset forgets every row and keeps the memory for the next run.
func (r *rowNet) reset() {
	r.arena, r.ends, r.counts, r.next = r.arena[:0], r.ends[:0], r.counts[:0], r.next[:0]
	clear(r.heads)
}

// drop forgets every row and the memory that held them.
func (r *rowNet) drop() {
	r.arena, r.ends, r.counts, r.next, r.buf = nil, nil, nil, nil, nil
	r.heads = map[uint64]int32{}
}

// emit sends, in order of first change, each row whose count has sign
// sign (+1 or -1), as many times as its count's magnitude, in batches of
// up to BatchSize rows. The batches' ops are all op, or nil (all inserts)
// if withOps is false.
func (r *rowNet) emit(ctx context.Context, mem memory.Allocator, ts []types.T, sign int64, op Op, withOps bool, out Output) error {
	bs := newBuilders(mem, ts)
	defer releaseBuilders(bs)
	schema := SchemaOf(ts)
	rows := 0
	flush := func() error {
		var ops []Op
		if withOps {
			ops = make([]Op, rows)
			for i := range ops {
				ops[i] = op
			}
		}
		b := NewBatch(buildRecord(schema, bs, rows), ops)
		rows = 0
		return out.Emit(ctx, Message{Batch: b})
	}
	for i := range r.counts {
		for n := sign * r.counts[i]; n > 0; n-- {
			if err := r.codec.Decode(r.row(i), bs); err != nil {
				return err
			}
			rows++
			if rows == BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	if rows > 0 {
		return flush()
	}
	return nil
}
