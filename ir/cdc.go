package ir

// CDCFrom is the FROM clause of a table fed by a change-data-capture source:
// CREATE TABLE t (...) FROM source TABLE 'schema.table'.
type CDCFrom struct {
	// Source is the source's name as written (lower-cased unless quoted).
	Source string
	// Table is the upstream table, schema-qualified ("public.t" if no schema
	// was given).
	Table string
}
