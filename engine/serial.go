package engine

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// sequences are the counters of a table's serial columns. The table writer
// advances them under its mutex and writes them to the table's sequence
// state table in the epoch of the rows that used them, so that after a
// crash a counter is at least past every value a committed row holds: no
// value is handed out twice. Values taken by a statement that fails are
// skipped, as PostgreSQL's sequences skip them.
type sequences struct {
	cols  []int   // the serial columns, catalog indexes
	vis   []int   // their positions among the visible columns
	next  []int64 // the next value of each
	max   []int64 // the largest value of each column's type
	names []string
	table *state.Table
}

// openSequences loads the counters of rel's serial columns; nil if it has
// none.
func openSequences(e *Engine, rel *catalog.Relation) (*sequences, error) {
	s := &sequences{}
	for v, ci := range rel.VisibleColumns() {
		c := rel.Columns[ci]
		if !c.Serial {
			continue
		}
		hi := int64(math.MaxInt64)
		switch c.Type.Kind {
		case types.Int16:
			hi = math.MaxInt16
		case types.Int32:
			hi = math.MaxInt32
		}
		s.cols, s.vis, s.max = append(s.cols, ci), append(s.vis, v), append(s.max, hi)
		s.names = append(s.names, rel.Name+"_"+c.Name+"_seq")
		s.next = append(s.next, 1)
	}
	if len(s.cols) == 0 {
		return nil, nil
	}
	s.table = e.store.Table(state.TableID(rel.SequenceTable))
	for j, ci := range s.cols {
		v, ok, err := s.table.Get(sequenceKey(ci))
		if err != nil {
			return nil, err
		}
		if ok {
			if len(v) != 8 {
				return nil, sqlerr.New(sqlerr.InternalError, "corrupt sequence counter of %s", s.names[j])
			}
			s.next[j] = int64(binary.BigEndian.Uint64(v))
		}
	}
	return s, nil
}

func sequenceKey(col int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(col)) }

// fill returns rec (an INSERT source batch: the visible columns, then one
// boolean column per serial column) as a batch of the visible columns, each
// serial column's value taken from its counter where the flag is set. The
// counters used are written to the sequence table. The caller releases the
// result; rec stays the caller's. vis are the visible columns' types.
func (s *sequences) fill(mem memory.Allocator, rec arrow.RecordBatch, vis []types.T) (arrow.RecordBatch, error) {
	nvis := int(rec.NumCols()) - len(s.cols)
	cols := make([]arrow.Array, nvis)
	for i := range cols {
		cols[i] = rec.Column(i)
		cols[i].Retain()
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	n := int(rec.NumRows())
	for j, v := range s.vis {
		flags := rec.Column(nvis + j).(*array.Boolean)
		b := array.NewBuilder(mem, vis[v].ArrowType())
		b.Reserve(n)
		used := false
		for i := 0; i < n; i++ {
			if !flags.IsValid(i) || !flags.Value(i) {
				appendIntAt(b, cols[v], i)
				continue
			}
			if s.next[j] > s.max[j] {
				b.Release()
				s.save(j)
				return nil, sqlerr.New("2200H", "nextval: reached maximum value of sequence \"%s\" (%d)", s.names[j], s.max[j])
			}
			appendInt(b, s.next[j])
			s.next[j]++
			used = true
		}
		col := b.NewArray()
		b.Release()
		cols[v].Release()
		cols[v] = col
		if used {
			s.save(j)
		}
	}
	return array.NewRecordBatch(exec.SchemaOf(vis), cols, int64(n)), nil
}

// save writes counter j to the sequence table (in the current epoch).
func (s *sequences) save(j int) {
	s.table.Put(sequenceKey(s.cols[j]), binary.BigEndian.AppendUint64(nil, uint64(s.next[j])))
}

func appendInt(b array.Builder, v int64) {
	switch b := b.(type) {
	case *array.Int16Builder:
		b.Append(int16(v))
	case *array.Int32Builder:
		b.Append(int32(v))
	case *array.Int64Builder:
		b.Append(v)
	}
}

func appendIntAt(b array.Builder, col arrow.Array, i int) {
	if col.IsNull(i) {
		b.AppendNull()
		return
	}
	switch c := col.(type) {
	case *array.Int16:
		appendInt(b, int64(c.Value(i)))
	case *array.Int32:
		appendInt(b, int64(c.Value(i)))
	case *array.Int64:
		appendInt(b, c.Value(i))
	}
}

func hasSerial(cols []catalog.Column) bool {
	for _, c := range cols {
		if c.Serial {
			return true
		}
	}
	return false
}
