package ir

// OnConflict is INSERT's ON CONFLICT clause. Conflicts are on the table's
// primary key (the only unique constraint streamsql has).
type OnConflict struct {
	// Update is DO UPDATE; false is DO NOTHING.
	Update bool
	// Set computes the new version of each row a proposed row conflicts
	// with. It reads a CopyInput of the stored row's columns then the
	// proposed (EXCLUDED) row's, all of them, hidden included; it returns one
	// column per table column, then a boolean: whether the row is updated
	// (DO UPDATE's WHERE; true without one).
	Set Rel
}
