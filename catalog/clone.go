package catalog

import "maps"

// Clone returns a handle on a copy of the catalog's index, on the same
// database: relations, schemas, databases and functions added to or removed
// from the copy do not change c, nor the other way round. The relations
// themselves are shared (they are immutable). It is for binding definitions
// against a catalog as it will be after a change, before committing it.
func (c *Catalog) Clone() *Catalog {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	return &Catalog{idx: &index{
		byName:    maps.Clone(c.idx.byName),
		byID:      maps.Clone(c.idx.byID),
		schemas:   maps.Clone(c.idx.schemas),
		databases: maps.Clone(c.idx.databases),
		funcs:     maps.Clone(c.idx.funcs),
	}, db: c.db}
}
