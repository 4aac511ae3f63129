package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// SessionWindow assigns every input row the session that holds it: its
// output is the input's columns, then window_start and window_end (of the
// time column's type). A session of a partition (rows with equal
// PartitionCols, NULLs equal; none: the whole input) is a maximal run of its
// rows ordered by TimeCol in which each row is less than Gap (microseconds,
// positive) after the previous one; window_start is its first time,
// window_end its last time plus Gap. Rows whose time is NULL are dropped, or
// with KeepNulls kept with NULL bounds.
//
// It is SESSION in FROM, and the first half of a window function over a
// session frame (OVER (PARTITION BY k ORDER BY ts SESSION WITH GAP g)),
// which computes its calls over PARTITION BY k, window_start of this node's
// output (build it with builder.sessionWindow, KeepNulls set).
//
// In a streaming plan the output's stream key is the input's: each input
// row is one output row, whose bounds change (retraction and insertion at a
// barrier) as later changes extend, merge, shrink or split its session. In a
// batch plan the input is insert-only and the rows come at the final
// barrier.
type SessionWindow struct {
	Input         Node
	TimeCol       int
	Gap           int64
	PartitionCols []int
	KeepNulls     bool
	Cols          []ir.Column
	Key           []int
	// Table is the state table slot of the input rows, keyed by partition,
	// time and input stream key.
	Table int
	// Watermark is set when the time column carries a watermark: late rows
	// are dropped, final sessions leave the state, and window_end carries a
	// watermark. IndexTable is then the slot of the sessions by window_end,
	// WatermarkTable that of the watermark reached (-1 otherwise).
	Watermark      bool
	IndexTable     int
	WatermarkTable int
}

func (n *SessionWindow) Columns() []ir.Column { return n.Cols }
func (n *SessionWindow) StreamKey() []int     { return n.Key }
func (n *SessionWindow) Inputs() []Node       { return []Node{n.Input} }

// WindowEnd is the output column of window_end.
func (n *SessionWindow) WindowEnd() int { return len(n.Input.Columns()) + 1 }

// PartitionTypes returns the types of the partition columns.
func (n *SessionWindow) PartitionTypes() []types.T {
	return colTypes(n.Input.Columns(), n.PartitionCols)
}

// sessionWindowRel builds SESSION in FROM.
func (b *builder) sessionWindowRel(r *ir.SessionWindow) (Node, error) {
	in, err := b.build(r.Input)
	if err != nil {
		return nil, err
	}
	// KeepNulls marks the sessions of a SESSION WITH GAP frame: window
	// functions see every row, late or not, so those rely on no watermark.
	n := b.sessionWindow(in, r.TimeCol, r.Gap, r.PartitionCols, r.KeepNulls, !r.KeepNulls)
	n.Cols = r.Cols
	return n, nil
}

// sessionWindow builds a SessionWindow over in and allocates its state
// tables: sessions of the rows of each partition (partition, columns of in)
// by timeCol (a timestamp or timestamptz column of in) with a gap of gap
// microseconds (positive). keepNulls keeps the rows whose time is NULL, with
// NULL window_start and window_end, as a window function must. useWatermark
// lets a watermark on timeCol make rows behind it late and sessions it has
// passed final (SESSION in FROM); without it every row counts.
func (b *builder) sessionWindow(in Node, timeCol int, gap int64, partition []int, keepNulls, useWatermark bool) *SessionWindow {
	t := in.Columns()[timeCol].Type
	cols := append([]ir.Column(nil), in.Columns()...)
	cols = append(cols, ir.Column{Name: "window_start", Type: t}, ir.Column{Name: "window_end", Type: t})
	n := &SessionWindow{Input: in, TimeCol: timeCol, Gap: gap, PartitionCols: partition, KeepNulls: keepNulls,
		Cols: cols, IndexTable: -1, WatermarkTable: -1}
	n.Table = b.table()
	if !b.stream {
		return n
	}
	n.Key = in.StreamKey()
	if useWatermark && hasWatermark(in, timeCol) {
		n.Watermark = true
		n.IndexTable = b.table()
		n.WatermarkTable = b.table()
		if !b.legacyKeys {
			// A row's version behind the watermark (kept: its delete is
			// late) and a newer one are distinct rows.
			n.Key = withColumn(n.Key, timeCol)
		}
	}
	return n
}

// sessionDetail renders a SessionWindow for EXPLAIN.
func (e *explainer) sessionDetail(n *SessionWindow) string {
	in := n.Input.Columns()
	s := fmt.Sprintf("time: %s, gap: %s", colName(in, n.TimeCol), micros(n.Gap))
	if len(n.PartitionCols) > 0 {
		s = fmt.Sprintf("partition: %s, %s", keyList(in, n.PartitionCols), s)
	}
	if n.KeepNulls {
		s += ", NULL times kept"
	}
	if !e.stream {
		return s
	}
	tables := []string{"rows: " + e.name(n.Table)}
	if n.Watermark {
		s += fmt.Sprintf(", watermark: %s (final sessions dropped)", colName(in, n.TimeCol))
		tables = append(tables, "sessions: "+e.name(n.IndexTable), "watermark: "+e.name(n.WatermarkTable))
	}
	return s + fmt.Sprintf(", stream_key: %s, state_tables: [%s]", e.key(n), strings.Join(tables, ", "))
}
