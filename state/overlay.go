package state

// An overlay is a private Table over a committed Snapshot: reads see the
// overlay's own writes first, then the snapshot's committed rows of the same
// table id. Its writes are never committed, sealed or seen by anyone else:
// the store does not know the overlay. Transactions buffer their writes in
// overlays until COMMIT applies them to the real tables.
//
// An overlay without a snapshot (SetBase(nil)) reads only its own writes.
// Like any Table, an overlay and its Iters belong to one goroutine.

// NewOverlay returns an empty overlay of table id of s over snap (may be
// nil). The overlay does not hold a reference to snap: the caller keeps snap
// alive while the overlay reads it, and changes it with SetBase.
func (s *Store) NewOverlay(id TableID, snap *Snapshot) *Table {
	t := newTable(s, id)
	t.overlay = true
	t.base = snap
	return t
}

// SetBase makes the overlay read snap under its own writes (nil: only its
// own writes).
func (t *Table) SetBase(snap *Snapshot) { t.base = snap }

// Clone returns a copy of the overlay's writes that later writes to either
// do not change (a copy-on-write copy: cheap). It is how a transaction keeps
// its state at a savepoint.
func (t *Table) Clone() *Table {
	c := t.store.NewOverlay(t.id, t.base)
	if t.cur != nil {
		// The clone allocates from an arena of its own; the bytes both
		// point at are never written again.
		c.cur = &layer{points: t.cur.points.IsoCopy(), dels: t.cur.dels, bytes: t.cur.bytes}
	}
	return c
}

// Len returns the number of keys the overlay wrote (deletions included).
func (t *Table) Len() int {
	if t.cur == nil {
		return 0
	}
	return t.cur.points.Len()
}

// Writes calls fn for every key the overlay wrote, in key order, with its
// value, or deleted set for a deletion, until fn returns false. The slices
// are valid as long as the overlay is; fn must not write to the overlay.
func (t *Table) Writes(fn func(key, value []byte, deleted bool) bool) {
	if t.cur == nil {
		return
	}
	t.cur.points.Scan(func(e entry) bool { return fn(e.key(), e.value(), e.del) })
}

// Written returns the overlay's own write of key: its value (ok) or a
// deletion (written, !ok); written is false if the overlay did not write
// key.
func (t *Table) Written(key []byte) (value []byte, ok, written bool) {
	if t.cur == nil {
		return nil, false, false
	}
	if e, found := t.cur.get(key); found {
		return e.value(), !e.del, true
	}
	return nil, false, false
}

// overlayGet is Get of an overlay after its own layer missed key.
func (t *Table) overlayGet(key []byte) ([]byte, bool, error) {
	if t.base == nil {
		return nil, false, nil
	}
	return t.base.Get(t.id, key)
}

// overlayIter is NewIter of an overlay: its own layer over the snapshot's.
func (t *Table) overlayIter(lower, upper []byte) (*Iter, error) {
	var it *Iter
	if t.base != nil {
		var err error
		if it, err = t.base.NewIter(t.id, lower, upper); err != nil {
			return nil, err
		}
	} else {
		it = newIter(t.store, t.prefix, lower, upper)
	}
	if l := t.cur; l != nil {
		own := iterSource{tree: l.points.IsoCopy(), dels: l.dels}
		own.bi = own.tree.Iter()
		it.srcs = append([]iterSource{own}, it.srcs...)
	}
	return it, nil
}
