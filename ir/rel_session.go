package ir

// SessionWindow is SESSION(input, ts, gap [, partition_col ...]) in FROM:
// every input row with window_start and window_end of the session that holds
// it. A session of a partition (the rows with equal PartitionCols, NULLs
// equal; no partition columns: the whole input) is a maximal run of the
// partition's rows ordered by the time column in which each row is less than
// Gap after the previous one; window_start is its first time, window_end its
// last time plus Gap (Flink's session windows; a row Gap or more after the
// previous one starts a new session, as in RisingWave's SESSION WITH GAP).
// Rows whose time is NULL are in no session and are left out.
//
// Its columns are the input's, then window_start and window_end, of the time
// column's type. Gap is in microseconds, positive.
type SessionWindow struct {
	Input         Rel
	TimeCol       int
	Gap           int64
	PartitionCols []int
	Cols          []Column
	// KeepNulls keeps the rows whose time is NULL, with NULL bounds (for
	// SESSION WITH GAP windows, which keep every row).
	KeepNulls bool
}

func (r *SessionWindow) Columns() []Column { return r.Cols }
