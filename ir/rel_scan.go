package ir

// Relation returns the catalog relation a Scan reads (helper for planners).
func (r *Scan) Name() string {
	if r.Alias != "" {
		return r.Alias
	}
	return r.Relation.Name
}
