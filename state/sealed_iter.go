package state

import (
	"context"

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
// Contract: the result is the table as of epoch only if the owner has sealed
// epoch already (the caller learns it from the barrier of epoch, which the
// owner forwards after sealing) and no Commit of an epoch > epoch has
// completed before the Pebble iterator is opened (the caller holds back its
// acknowledgement of epoch, so that no later epoch can commit). NewSealedIter
// checks the second condition and fails with an internal error if it does
// not hold (it sees a later epoch committed).
func (t *Table) NewSealedIter(epoch uint64, lower, upper []byte) (*Iter, error) {
	it := newIter(t.store, t.prefix, lower, upper)
	// As in NewIter, the sealed layers are loaded before Pebble is opened: a
	// Commit in between moves layers into Pebble, where the loaded copies
	// shadow them with the same writes.
	sealed := *t.sealed.Load()
	for i := len(sealed) - 1; i >= 0; i-- {
		if sealed[i].epoch <= epoch {
			it.addLayer(sealed[i].points, sealed[i].dels)
		}
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
