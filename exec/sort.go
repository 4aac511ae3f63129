package exec

import (
	"context"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// Sort buffers its whole (insert-only) input and, at the barrier that ends
// it, emits the rows in ORDER BY order. It is for batch queries only.
type Sort struct {
	mem   memory.Allocator
	keys  []ir.SortKey
	types []types.T
	recs  []arrow.RecordBatch
}

// NewSort returns a Sort over rows of the given types.
func NewSort(mem memory.Allocator, keys []ir.SortKey, ts []types.T) *Sort {
	return &Sort{mem: mem, keys: keys, types: ts}
}

// OnBatch buffers b.
func (s *Sort) OnBatch(_ context.Context, b *Batch, _ Output) error {
	s.recs = append(s.recs, b.Rec)
	b.Rec = nil
	return nil
}

type rowRef struct{ rec, row int32 }

// OnBarrier sorts and emits the buffered rows.
func (s *Sort) OnBarrier(ctx context.Context, _ *barrier.Barrier, out Output) error {
	defer s.release()
	var refs []rowRef
	nk := len(s.keys)
	var keyVals []types.Datum
	for r, rec := range s.recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			refs = append(refs, rowRef{int32(r), int32(i)})
			for _, k := range s.keys {
				keyVals = append(keyVals, types.DatumAt(s.types[k.Column], rec.Column(k.Column), i))
			}
		}
	}
	idx := make([]int, len(refs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keyVals[idx[a]*nk:idx[a]*nk+nk], keyVals[idx[b]*nk:idx[b]*nk+nk]
		for j, k := range s.keys {
			if c := compareSortValues(s.types[k.Column], ka[j], kb[j], k); c != 0 {
				return c < 0
			}
		}
		return false
	})
	bs := newBuilders(s.mem, s.types)
	defer releaseBuilders(bs)
	schema := SchemaOf(s.types)
	n := 0
	for _, i := range idx {
		ref := refs[i]
		rec := s.recs[ref.rec]
		for c, t := range s.types {
			types.AppendDatum(bs[c], t, types.DatumAt(t, rec.Column(c), int(ref.row)))
		}
		n++
		if n == BatchSize {
			if err := out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, n), nil)}); err != nil {
				return err
			}
			n = 0
		}
	}
	if n > 0 {
		return out.Emit(ctx, Message{Batch: NewBatch(buildRecord(schema, bs, n), nil)})
	}
	return nil
}

// compareSortValues orders two values for one ORDER BY key, placing NULLs
// first or last as the key says.
func compareSortValues(t types.T, a, b types.Datum, k ir.SortKey) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		if k.NullsFirst {
			return -1
		}
		return 1
	case b.Null:
		if k.NullsFirst {
			return 1
		}
		return -1
	}
	c := types.Compare(t, a, b)
	if k.Desc {
		c = -c
	}
	return c
}

func (s *Sort) release() {
	for _, r := range s.recs {
		r.Release()
	}
	s.recs = nil
}

// Close releases buffered rows.
func (s *Sort) Close() { s.release() }
