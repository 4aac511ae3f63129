package state

import (
	"cmp"
	"context"
	"slices"

	"github.com/streamsql/streamsql/sqlerr"
)

// NewSealedIter returns an iterator over the keys of t in [lower, upper) as
// of the end of epoch: t's committed data merged with its sealed layers of
// epochs <= epoch. The current layer and sealed layers of later epochs are
// not read. It is the read a view's backfill makes of an upstream table that
// another goroutine (the table's owner) goes on writing.
//
// Goroutine safety: unlike NewIter, NewSealedIter may be called from any
// goroutine, concurrently with the owner's writes and Seals and with
// Store.Commit: it only loads the immutable slice of sealed layers (whose
// layers never change once sealed) and opens a Pebble iterator, which sees
// Pebble as of its creation. The Iter belongs to the caller's goroutine.
//
// A table written by several actors (Store.TableShard) is read whole: the
// sealed layers of every handle of t's table are merged, whichever handle
// NewSealedIter is called on, so that a backfill from a parallel view sees
// every actor's rows of the epochs not yet committed.
//
// Contract: the result is the table as of epoch only if the owner (every
// owner, for a table with shard handles) has sealed epoch already (the
// caller learns it from the barrier of epoch, which the owner forwards
// after sealing) and no Commit of an epoch > epoch has
// completed before the Pebble iterator is opened (the caller holds back its
// acknowledgement of epoch, so that no later epoch can commit). NewSealedIter
// checks the second condition and fails with an internal error if it does
// not hold (it sees a later epoch committed).
func (t *Table) NewSealedIter(epoch uint64, lower, upper []byte) (*Iter, error) {
	it := newIter(t.store, t.prefix, lower, upper)
	// As in NewIter, the sealed layers are loaded before Pebble is opened: a
	// Commit in between moves layers into Pebble, where the loaded copies
	// shadow them with the same writes.
	for _, l := range t.store.sealedLayers(t, epoch) {
		it.addLayer(l.points, l.dels)
	}
	pi, err := t.store.db.NewIterWithContext(context.Background(), it.pebbleBounds())
	if err != nil {
		_ = it.Close()
		return nil, ioError("read", err)
	}
	it.addPebble(pi)
	if c := t.store.committed.Load(); c > epoch {
		_ = it.Close()
		return nil, sqlerr.New(sqlerr.InternalError,
			"state: read of table %d as of epoch %d after epoch %d committed", t.id, epoch, c)
	}
	return it, nil
}

// sealedLayers returns the sealed layers of epochs <= epoch of every handle
// of t's table (t and its shard handles), newest first. The handles' keys
// are disjoint, so the order among layers of one epoch does not matter;
// across epochs a later range deletion must hide an earlier write.
func (s *Store) sealedLayers(t *Table, epoch uint64) []*layer {
	s.mu.Lock()
	handles := append([]*Table{s.tables[t.id]}, s.shards[t.id]...)
	s.mu.Unlock()
	if !slices.Contains(handles, t) {
		handles = append(handles, t) // a released handle
	}
	var out []*layer
	for _, h := range handles {
		if h == nil {
			continue
		}
		for _, l := range *h.sealed.Load() {
			if l.epoch <= epoch {
				out = append(out, l)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *layer) int { return cmp.Compare(b.epoch, a.epoch) })
	return out
}
