package engine

import "github.com/streamsql/streamsql/catalog"

// columnGrantChanges returns the grant changes that follow a table's
// columns from old to changed, its new catalog entry: the grants on a
// renamed column move to the new name, those on a dropped column go, so
// that a column added later under an old name starts with no grants.
// Columns are matched by position when old and changed have as many (a
// rename), else by name (a column added or dropped).
func (e *Engine) columnGrantChanges(old, changed *catalog.Relation) []catalog.Grant {
	var out []catalog.Grant
	sameShape := len(old.Columns) == len(changed.Columns)
	for i, c := range old.Columns {
		to := ""
		switch {
		case sameShape:
			to = changed.Columns[i].Name
		case changed.ColumnIndex(c.Name) >= 0:
			to = c.Name
		}
		if to == c.Name {
			continue
		}
		for _, g := range e.roles.Grants(catalog.ColumnObject(old.ID, c.Name)) {
			if to != "" {
				moved := g
				moved.Object = catalog.ColumnObject(old.ID, to)
				out = append(out, moved)
			}
			g.Privs, g.Grantable = 0, 0
			out = append(out, g)
		}
	}
	return out
}

// putGrantChanges writes gs, grant changes (no privileges: a removal), into
// the catalog's state, in the epoch of the caller's catalog change.
func (e *Engine) putGrantChanges(gs []catalog.Grant) error {
	for i := range gs {
		if err := e.catSrc.putGrant(&gs[i]); err != nil {
			return err
		}
	}
	return nil
}

// applyGrantChanges records gs, once committed, in the roles.
func (e *Engine) applyGrantChanges(gs []catalog.Grant) {
	for _, g := range gs {
		e.roles.PutGrant(g)
	}
}
