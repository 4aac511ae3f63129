package ir

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Window computes window function calls (f(...) OVER (...)) over the rows of
// its input. The rows are split into partitions by PartitionBy and ordered
// inside each partition by OrderBy; each call then sees the rows of its
// frame, a range of its partition around the current row.
//
// All the calls of one Window share its PARTITION BY and ORDER BY (and so one
// sort); calls with other PARTITION BY or ORDER BY lists are in other Windows
// stacked on this one, as PostgreSQL plans one WindowAgg per window. Frames
// may differ between the calls of one Window.
//
// The output has the input's columns, unchanged and in order, then one column
// per call, in order: the column of Calls[i] is len(Input.Columns())+i.
// A Window keeps every input row and never changes its input columns, so
// expressions over the input stay valid over the output.
//
// A TopN rewrite of WHERE rn <= N recognises a Filter over (a Project over)
// a Window whose call is Func WinRowNumber, WinRank or WinDenseRank with no
// Args; its PARTITION BY is PartitionBy and its ORDER BY is OrderBy.
type Window struct {
	Input Rel
	// PartitionBy are expressions over Input; rows with equal values (NULLs
	// equal) are in the same partition. Empty: one partition.
	PartitionBy []Expr
	// OrderBy orders the rows of a partition; rows equal on every key are
	// peers. Empty: every row of the partition is a peer of every other.
	OrderBy []WindowKey
	Calls   []WindowCall
	Cols    []Column
	// SessionGap (microseconds), if set (SESSION WITH GAP), splits each
	// partition further into sessions of its one ORDER BY key, a time: the
	// frames of the calls stay within a session.
	SessionGap int64
}

// WindowKey is one ORDER BY item of a window: an expression over the
// Window's input and its direction.
type WindowKey struct {
	Expr       Expr
	Desc       bool
	NullsFirst bool
}

// Window function names (WindowCall.Func); aggregates over a frame use the
// Agg* names.
const (
	WinRowNumber   = "row_number"
	WinRank        = "rank"
	WinDenseRank   = "dense_rank"
	WinPercentRank = "percent_rank"
	WinCumeDist    = "cume_dist"
	WinNtile       = "ntile"
	WinLag         = "lag"
	WinLead        = "lead"
	WinFirstValue  = "first_value"
	WinLastValue   = "last_value"
	WinNthValue    = "nth_value"
)

// WindowCall is one window function call. Its arguments, by function:
//
//	row_number, rank, dense_rank,
//	percent_rank, cume_dist     none
//	ntile                       buckets (integer constant)
//	lag, lead                   value, offset (integer constant), default
//	                            (of value's type; a NULL constant when
//	                            not given): always three
//	first_value, last_value     value
//	nth_value                   value, n (integer constant)
//	count(*)                    none; the other aggregates: value
//
// Every argument is an expression over the Window's input; those documented
// as constants have no column references (parameters are bound as
// constants).
type WindowCall struct {
	Func string
	Args []Expr
	// Filter, for aggregates only, is a boolean expression over the input:
	// only rows for which it is true are aggregated (FILTER (WHERE ...)).
	Filter Expr
	// Frame is the call's frame. Ranking functions (row_number ... ntile)
	// and lag/lead ignore it.
	Frame WindowFrame
	// IgnoreNulls makes lag, lead, first_value, last_value and nth_value
	// skip rows whose value is NULL (IGNORE NULLS). PostgreSQL's grammar
	// cannot express it; plans may set it.
	IgnoreNulls bool
	// T is the result type.
	T types.T
}

// FrameMode is how a frame's offsets count: rows, values of the ORDER BY
// column, or peer groups.
type FrameMode uint8

// The frame modes.
const (
	FrameRange FrameMode = iota
	FrameRows
	FrameGroups
)

// BoundKind is the kind of a frame's start or end.
type BoundKind uint8

// The frame bound kinds.
const (
	BoundUnboundedPreceding BoundKind = iota
	BoundPreceding
	BoundCurrentRow
	BoundFollowing
	BoundUnboundedFollowing
)

// FrameBound is a frame's start or end. Offset is set for BoundPreceding
// and BoundFollowing: a constant expression (no column references) of type
// bigint in ROWS and GROUPS mode; in RANGE mode of the type the ORDER BY
// column's offsets have (the column's own type for numbers, interval for
// dates, timestamps and intervals, double precision for real).
type FrameBound struct {
	Kind   BoundKind
	Offset Expr
}

// FrameExclude is a frame's EXCLUDE clause.
type FrameExclude uint8

// The frame exclusions.
const (
	ExcludeNoOthers FrameExclude = iota
	ExcludeCurrentRow
	ExcludeGroup
	ExcludeTies
)

// WindowFrame is a call's frame: the rows of its partition from Start to End
// (both included), less those Exclude removes.
type WindowFrame struct {
	Mode       FrameMode
	Start, End FrameBound
	Exclude    FrameExclude
}

// DefaultFrame is the frame of a window without a frame clause: RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW (with no ORDER BY, the whole
// partition, every row being a peer).
var DefaultFrame = WindowFrame{
	Mode:  FrameRange,
	Start: FrameBound{Kind: BoundUnboundedPreceding},
	End:   FrameBound{Kind: BoundCurrentRow},
}

// IsRanking reports whether fn is a ranking function, which ignores frames.
func IsRanking(fn string) bool {
	switch fn {
	case WinRowNumber, WinRank, WinDenseRank, WinPercentRank, WinCumeDist, WinNtile:
		return true
	}
	return false
}

func (r *Window) Columns() []Column { return r.Cols }

// String renders the frame as SQL (for EXPLAIN).
func (f WindowFrame) String() string {
	mode := map[FrameMode]string{FrameRange: "RANGE", FrameRows: "ROWS", FrameGroups: "GROUPS"}[f.Mode]
	s := fmt.Sprintf("%s BETWEEN %s AND %s", mode, f.Start, f.End)
	switch f.Exclude {
	case ExcludeCurrentRow:
		s += " EXCLUDE CURRENT ROW"
	case ExcludeGroup:
		s += " EXCLUDE GROUP"
	case ExcludeTies:
		s += " EXCLUDE TIES"
	}
	return s
}

func (b FrameBound) String() string {
	switch b.Kind {
	case BoundUnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case BoundPreceding:
		return b.Offset.String() + " PRECEDING"
	case BoundCurrentRow:
		return "CURRENT ROW"
	case BoundFollowing:
		return b.Offset.String() + " FOLLOWING"
	}
	return "UNBOUNDED FOLLOWING"
}

// String renders the call without its window (for EXPLAIN), e.g.
// "lag(v#2, 1, NULL)" or "count(*) FILTER (WHERE ...)".
func (c WindowCall) String() string {
	var b strings.Builder
	b.WriteString(c.Func)
	b.WriteByte('(')
	if c.Func == AggCountStar {
		b.Reset()
		b.WriteString("count(*")
	}
	for i, a := range c.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteByte(')')
	if c.IgnoreNulls {
		b.WriteString(" IGNORE NULLS")
	}
	if c.Filter != nil {
		fmt.Fprintf(&b, " FILTER (WHERE %s)", c.Filter)
	}
	return b.String()
}
