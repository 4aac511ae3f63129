package state

import (
	"bytes"
	"context"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tidwall/btree"
)

// NewIter returns an iterator over the keys of t in [lower, upper) (nil bounds
// are unbounded), in key order, over the merged view of every write so far:
// the current layer, the sealed layers and Pebble, newer writes and deletions
// hiding older ones. Keys and values are relative to the table.
//
// The iterator sees the table as of the call: writes, Seals and Commits after
// NewIter do not change what it returns and do not disturb it. (It holds a
// copy-on-write clone of the current layer, so the first write to each part of
// the layer after NewIter copies that part.) The Iter belongs to t's owner
// goroutine and must be closed.
func (t *Table) NewIter(lower, upper []byte) (*Iter, error) {
	if t.overlay {
		return t.overlayIter(lower, upper)
	}
	it := newIter(t.store, t.prefix, lower, upper)
	if l := t.cur; l != nil {
		it.addLayer(l.points.IsoCopy(), l.dels)
	}
	// Load the sealed layers before opening the Pebble iterator: a Commit in
	// between moves layers into Pebble, where the newer layers shadow them
	// with the same writes.
	sealed := *t.sealed.Load()
	for i := len(sealed) - 1; i >= 0; i-- {
		it.addLayer(sealed[i].points, sealed[i].dels)
	}
	pi, err := t.store.db.NewIterWithContext(context.Background(), it.pebbleBounds())
	if err != nil {
		_ = it.Close()
		return nil, ioError("read", err)
	}
	it.addPebble(pi)
	return it, nil
}

// Iter iterates over a key range of a table in key order, forwards and
// backwards. It merges its sources (in-memory layers, newest first, then
// Pebble): a key's newest write wins, and point and range deletions hide older
// writes. The usual loop is
//
//	for ok := it.First(); ok; ok = it.Next() { use(it.Key(), it.Value()) }
//	if err := it.Error(); err != nil { ... }
//
// and the maximum of a range is it.Last(). Key and Value are valid until the
// next positioning call; the caller must not modify them. An Iter is not safe
// for concurrent use and must be closed.
type Iter struct {
	store        *Store
	prefix       []byte // Pebble key prefix of the table
	lower, upper []byte // relative bounds, nil when unbounded
	srcs         []iterSource

	dir   int8 // +1 after a forward move, -1 after a backward one, 0 unpositioned
	valid bool
	cur   int // index of the source of the current key
	err   error
	kbuf  []byte // scratch for prefixed Pebble keys
	saved []byte // copy of the current key while sources move
	// pbounds alternate as the Pebble bounds of SetBounds: Pebble keeps the
	// slices it is given until the next SetBounds.
	pbounds [2][]byte
	pflip   int
}

// iterSource is one input of an Iter: an in-memory layer or Pebble.
type iterSource struct {
	tree *btree.BTreeG[entry] // nil for Pebble
	bi   btree.IterG[entry]
	dels []span // range deletions of the layer; they hide older sources

	pi *pebble.Iterator

	valid bool
	key   []byte
	e     entry // the current entry of a layer
}

func newIter(s *Store, prefix, lower, upper []byte) *Iter {
	it := &Iter{store: s, prefix: prefix}
	if lower != nil {
		it.lower = append([]byte{}, lower...)
	}
	if upper != nil {
		it.upper = append([]byte{}, upper...)
		if lower != nil && bytes.Compare(lower, upper) > 0 {
			it.upper = append(it.upper[:0], it.lower...) // an empty range; Pebble wants lower <= upper
		}
	}
	s.openIters.Add(1)
	return it
}

func (it *Iter) addLayer(tree *btree.BTreeG[entry], dels []span) {
	it.srcs = append(it.srcs, iterSource{tree: tree, bi: tree.Iter(), dels: dels})
}

func (it *Iter) addPebble(pi *pebble.Iterator) {
	it.srcs = append(it.srcs, iterSource{pi: pi})
}

// pebbleBounds returns the Pebble iterator options for the table and bounds.
func (it *Iter) pebbleBounds() *pebble.IterOptions {
	o := &pebble.IterOptions{LowerBound: append(append([]byte{}, it.prefix...), it.lower...)}
	if it.upper != nil {
		o.UpperBound = append(append([]byte{}, it.prefix...), it.upper...)
	} else {
		o.UpperBound = PrefixEnd(it.prefix)
	}
	return o
}

// SetBounds changes the iterator's range to [lower, upper) (nil: unbounded)
// and unpositions it; position it again with First, Last or a seek. It
// reuses the iterator's sources, so it is much cheaper than a new Iter for
// probing many ranges of a table in turn; as with any Iter, writes to the
// table after NewIter are not seen. Probing in ascending key order is
// fastest. The bounds are copied.
func (it *Iter) SetBounds(lower, upper []byte) {
	it.lower = setBound(it.lower, lower)
	it.upper = setBound(it.upper, upper)
	if it.lower != nil && it.upper != nil && bytes.Compare(it.lower, it.upper) > 0 {
		it.upper = append(it.upper[:0], it.lower...) // an empty range
	}
	it.valid, it.dir = false, 0
	for i := range it.srcs {
		s := &it.srcs[i]
		s.valid = false
		if s.pi == nil {
			continue
		}
		it.pflip ^= 1
		buf := append(append(it.pbounds[it.pflip][:0], it.prefix...), it.lower...)
		n := len(buf)
		if it.upper != nil {
			buf = append(append(buf, it.prefix...), it.upper...)
		} else {
			buf = appendPrefixEnd(buf, it.prefix)
		}
		it.pbounds[it.pflip] = buf
		upper := buf[n:]
		if len(upper) == 0 {
			upper = nil // the table's keys run to the end of the key space
		}
		s.pi.SetBounds(buf[:n:n], upper)
	}
}

// setBound copies bound into dst's storage; nil stays nil (unbounded).
func setBound(dst, bound []byte) []byte {
	if bound == nil {
		return nil
	}
	if dst == nil {
		dst = make([]byte, 0, len(bound)) // an empty bound is not unbounded
	}
	return append(dst[:0], bound...)
}

// Valid reports whether the iterator is positioned at a key.
func (it *Iter) Valid() bool { return it.valid }

// Key returns the current key.
func (it *Iter) Key() []byte { return it.srcs[it.cur].key }

// Value returns the current value.
func (it *Iter) Value() []byte {
	s := &it.srcs[it.cur]
	if s.tree != nil {
		return s.e.value()
	}
	v, err := s.pi.ValueAndErr()
	if err != nil && it.err == nil {
		it.err = ioError("read", err)
	}
	return v
}

// Error returns the first error the iterator met; an iterator that met one is
// not valid.
func (it *Iter) Error() error { return it.err }

// First moves to the first key in the range.
func (it *Iter) First() bool {
	for i := range it.srcs {
		it.srcs[i].first(it)
	}
	return it.findForward()
}

// Last moves to the last key in the range.
func (it *Iter) Last() bool {
	for i := range it.srcs {
		it.srcs[i].last(it)
	}
	return it.findReverse()
}

// SeekGE moves to the first key >= key in the range.
func (it *Iter) SeekGE(key []byte) bool {
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	for i := range it.srcs {
		it.srcs[i].seekGE(it, key)
	}
	return it.findForward()
}

// SeekLT moves to the last key < key in the range.
func (it *Iter) SeekLT(key []byte) bool {
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	for i := range it.srcs {
		it.srcs[i].seekLT(it, key)
	}
	return it.findReverse()
}

// Next moves to the next key. On an unpositioned iterator, or one that moved
// backwards past the first key, it acts as First; after the last key it
// returns false.
func (it *Iter) Next() bool {
	switch {
	case it.err != nil:
		return false
	case !it.valid:
		if it.dir <= 0 {
			return it.First()
		}
		return false
	case it.dir < 0:
		// Turn around: put every source after the current key.
		k := it.saveKey()
		for i := range it.srcs {
			s := &it.srcs[i]
			if s.seekGE(it, k) && bytes.Equal(s.key, k) {
				s.next(it)
			}
		}
		return it.findForward()
	}
	it.stepForward(it.saveKey())
	return it.findForward()
}

// Prev moves to the previous key. On an unpositioned iterator, or one that
// moved forwards past the last key, it acts as Last; before the first key it
// returns false.
func (it *Iter) Prev() bool {
	switch {
	case it.err != nil:
		return false
	case !it.valid:
		if it.dir >= 0 {
			return it.Last()
		}
		return false
	case it.dir > 0:
		k := it.saveKey()
		for i := range it.srcs {
			it.srcs[i].seekLT(it, k)
		}
		return it.findReverse()
	}
	it.stepReverse(it.saveKey())
	return it.findReverse()
}

// Close releases the iterator.
func (it *Iter) Close() error {
	if it.store == nil {
		return nil
	}
	var err error
	for i := range it.srcs {
		s := &it.srcs[i]
		if s.pi != nil {
			if cerr := s.pi.Close(); cerr != nil && err == nil {
				err = ioError("read", cerr)
			}
		} else {
			s.bi.Release()
		}
	}
	it.srcs = nil
	it.valid = false
	it.store.openIters.Add(-1)
	it.store = nil
	return err
}

// saveKey copies the current key, which a Pebble source overwrites when it
// moves.
func (it *Iter) saveKey() []byte {
	it.saved = append(it.saved[:0], it.Key()...)
	return it.saved
}

// findForward settles on the smallest visible key at or after the sources'
// positions, skipping deleted keys.
func (it *Iter) findForward() bool {
	it.dir = 1
	for {
		best := -1
		for i := range it.srcs {
			s := &it.srcs[i]
			// On equal keys the newer (lower index) source wins.
			if s.valid && (best < 0 || bytes.Compare(s.key, it.srcs[best].key) < 0) {
				best = i
			}
		}
		if best < 0 || it.err != nil {
			it.valid = false
			return false
		}
		b := &it.srcs[best]
		if sp, ok := it.covered(best, b.key); ok {
			// Skip the whole deleted span of this source.
			if sp.end == nil {
				b.valid = false
			} else {
				b.seekGE(it, sp.end)
			}
			continue
		}
		if b.tree != nil && b.e.del {
			it.stepForward(b.key)
			continue
		}
		it.cur, it.valid = best, true
		return true
	}
}

// findReverse settles on the largest visible key at or before the sources'
// positions, skipping deleted keys.
func (it *Iter) findReverse() bool {
	it.dir = -1
	for {
		best := -1
		for i := range it.srcs {
			s := &it.srcs[i]
			if s.valid && (best < 0 || bytes.Compare(s.key, it.srcs[best].key) > 0) {
				best = i
			}
		}
		if best < 0 || it.err != nil {
			it.valid = false
			return false
		}
		b := &it.srcs[best]
		if sp, ok := it.covered(best, b.key); ok {
			if sp.start == nil {
				b.valid = false
			} else {
				b.seekLT(it, sp.start)
			}
			continue
		}
		if b.tree != nil && b.e.del {
			it.stepReverse(b.key)
			continue
		}
		it.cur, it.valid = best, true
		return true
	}
}

// stepForward advances every source positioned at key. key must not alias a
// Pebble source's key (layer keys are stable).
func (it *Iter) stepForward(key []byte) {
	for i := range it.srcs {
		s := &it.srcs[i]
		if s.valid && bytes.Equal(s.key, key) {
			s.next(it)
		}
	}
}

// stepReverse moves back every source positioned at key.
func (it *Iter) stepReverse(key []byte) {
	for i := range it.srcs {
		s := &it.srcs[i]
		if s.valid && bytes.Equal(s.key, key) {
			s.prev(it)
		}
	}
}

// covered returns the range deletion of a source newer than src that covers
// key.
func (it *Iter) covered(src int, key []byte) (span, bool) {
	for j := 0; j < src; j++ {
		if sp, ok := coveringSpan(it.srcs[j].dels, key); ok {
			return sp, true
		}
	}
	return span{}, false
}

// The positioning methods of a source keep it inside the iterator's bounds
// (Pebble enforces them itself) and return whether it is valid.

func (s *iterSource) first(it *Iter) bool {
	if s.tree == nil {
		return s.setPebble(it, s.pi.First())
	}
	if it.lower != nil {
		return s.seekGE(it, it.lower)
	}
	return s.setForward(it, s.bi.First())
}

func (s *iterSource) last(it *Iter) bool {
	if s.tree == nil {
		return s.setPebble(it, s.pi.Last())
	}
	if it.upper != nil {
		return s.seekLT(it, it.upper)
	}
	return s.setReverse(it, s.bi.Last())
}

func (s *iterSource) seekGE(it *Iter, key []byte) bool {
	if s.tree == nil {
		it.kbuf = append(append(it.kbuf[:0], it.prefix...), key...)
		return s.setPebble(it, s.pi.SeekGE(it.kbuf))
	}
	return s.setForward(it, s.bi.Seek(probe(key)))
}

func (s *iterSource) seekLT(it *Iter, key []byte) bool {
	if s.tree == nil {
		it.kbuf = append(append(it.kbuf[:0], it.prefix...), key...)
		return s.setPebble(it, s.pi.SeekLT(it.kbuf))
	}
	if s.bi.Seek(probe(key)) {
		return s.setReverse(it, s.bi.Prev())
	}
	return s.setReverse(it, s.bi.Last())
}

func (s *iterSource) next(it *Iter) bool {
	if s.tree == nil {
		return s.setPebble(it, s.pi.Next())
	}
	return s.setForward(it, s.bi.Next())
}

func (s *iterSource) prev(it *Iter) bool {
	if s.tree == nil {
		return s.setPebble(it, s.pi.Prev())
	}
	return s.setReverse(it, s.bi.Prev())
}

func (s *iterSource) setForward(it *Iter, ok bool) bool {
	if ok {
		s.e = s.bi.Item()
		ok = it.upper == nil || bytes.Compare(s.e.key(), it.upper) < 0
	}
	return s.set(ok)
}

func (s *iterSource) setReverse(it *Iter, ok bool) bool {
	if ok {
		s.e = s.bi.Item()
		ok = it.lower == nil || bytes.Compare(s.e.key(), it.lower) >= 0
	}
	return s.set(ok)
}

func (s *iterSource) set(ok bool) bool {
	s.valid = ok
	if ok {
		s.key = s.e.key()
	} else {
		s.key = nil
	}
	return ok
}

func (s *iterSource) setPebble(it *Iter, ok bool) bool {
	s.valid = ok
	if ok {
		s.key = s.pi.Key()[len(it.prefix):]
		return true
	}
	s.key = nil
	if err := s.pi.Error(); err != nil && it.err == nil {
		it.err = ioError("read", err)
	}
	return false
}
