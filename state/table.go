package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tidwall/btree"
)

// TableID identifies a state table. 0 is reserved for the catalog; 1..N are
// allocated by the engine.
type TableID uint32

// Table is the keyed state of one operator (or one table or view) inside the
// store. Keys and values are opaque bytes; keys sort bytewise (use AppendKey to
// build memcomparable keys).
//
// Writes go to the current layer in memory. Seal(epoch) closes the current
// layer as that epoch's writes; Store.Commit(n) writes every sealed layer of
// epoch <= n to Pebble and drops it. Reads merge, newest first: the current
// layer, the sealed layers (newest epoch first), then Pebble.
//
// Goroutine safety: Put, Delete, DeleteRange, Clear, Get, NewIter and Seal
// (and the Iters NewIter returns) belong to one goroutine, the table's owner.
// Store.Commit and Store.Snapshot may run concurrently with them on other
// goroutines.
type Table struct {
	id     TableID
	store  *Store
	prefix []byte // tablePrefix + big-endian id; immutable

	// Owner-only state.
	cur        *layer // current writes; nil until the first write after Seal
	lastSealed uint64
	keyBuf     []byte // scratch for prefixed Pebble keys
	reads      arena  // copies of values read from Pebble

	// sealed holds the sealed, uncommitted layers, oldest first. The slice it
	// points to is never modified: Seal (owner) and Commit (committer) publish
	// a new slice under mu, and readers load it without locking.
	mu     sync.Mutex
	sealed atomic.Pointer[[]*layer]
	// pending is the key and value bytes of the current and sealed layers,
	// added to by the owner as it writes and taken from by the committer,
	// for Store.UncommittedBytes on any goroutine.
	pending atomic.Int64

	// overlay is set for a Store.NewOverlay table, which reads base (if
	// set) under its own writes instead of its sealed layers and Pebble.
	overlay bool
	base    *Snapshot
}

func newTable(s *Store, id TableID) *Table {
	t := &Table{id: id, store: s, prefix: tableKeyPrefix(id)}
	t.sealed.Store(new([]*layer))
	return t
}

// ID returns the table's id.
func (t *Table) ID() TableID { return t.id }

// Put sets key to value. It copies key and value.
func (t *Table) Put(key, value []byte) {
	l := t.writeLayer()
	kv := l.arena.alloc(len(key) + len(value))
	copy(kv, key)
	copy(kv[len(key):], value)
	before := l.bytes
	l.set(newEntry(kv, len(key), false))
	t.pending.Add(l.bytes - before)
}

// Delete removes key. It copies key.
func (t *Table) Delete(key []byte) {
	l := t.writeLayer()
	k := l.arena.alloc(len(key))
	copy(k, key)
	before := l.bytes
	l.set(newEntry(k, len(k), true))
	t.pending.Add(l.bytes - before)
}

// DeleteRange removes every key in [lower, upper); a nil bound is unbounded.
// Like the other writes it takes effect in the current layer: keys written
// after it are visible again. It costs O(log n) per key of the current layer
// it removes, and nothing for older layers or Pebble (it is recorded as a
// range deletion and written to Pebble as one).
func (t *Table) DeleteRange(lower, upper []byte) {
	if upper != nil && (len(upper) == 0 || (lower != nil && bytes.Compare(lower, upper) >= 0)) {
		return // an empty range
	}
	l := t.writeLayer()
	sp := span{start: l.arena.clone(lower), end: l.arena.clone(upper)}
	before := l.bytes
	l.deleteRange(sp)
	t.pending.Add(l.bytes - before)
}

// DeleteRangeVNodes removes, in every virtual node v of r, the keys in
// [v+lower, v+upper) (a nil lower is the first key of v, a nil upper the
// last; see AppendVNode): the same key range of each virtual node of a
// vnode-keyed table, as one write. It is DeleteRange per virtual node,
// merged into the layer at once.
func (t *Table) DeleteRangeVNodes(r VNodes, lower, upper []byte) {
	if r.Lo >= r.Hi || (lower != nil && upper != nil && bytes.Compare(lower, upper) >= 0) {
		return
	}
	l := t.writeLayer()
	before := l.bytes
	l.deleteRanges(vnodeSpans(&l.arena, r, lower, upper))
	t.pending.Add(l.bytes - before)
}

// Clear deletes every key of the table (used when a view is dropped). It is
// DeleteRange(nil, nil).
func (t *Table) Clear() { t.DeleteRange(nil, nil) }

// Get returns the value of key as of all writes so far, committed or not. The
// returned slice must not be modified; it is valid until the next write or
// Seal on t (callers copy it to keep it).
func (t *Table) Get(key []byte) (value []byte, ok bool, err error) {
	if l := t.cur; l != nil {
		if e, found := l.get(key); found {
			return e.value(), !e.del, nil
		}
		if l.covers(key) {
			return nil, false, nil
		}
	}
	if t.overlay {
		return t.overlayGet(key)
	}
	sealed := *t.sealed.Load()
	for i := len(sealed) - 1; i >= 0; i-- {
		l := sealed[i]
		if e, found := l.get(key); found {
			return e.value(), !e.del, nil
		}
		if l.covers(key) {
			return nil, false, nil
		}
	}
	t.keyBuf = append(append(t.keyBuf[:0], t.prefix...), key...)
	v, closer, err := t.store.db.Get(t.keyBuf)
	if err == pebble.ErrNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, ioError("read", err)
	}
	out := t.reads.alloc(len(v))
	copy(out, v)
	if err := closer.Close(); err != nil {
		return nil, false, ioError("read", err)
	}
	return out, true, nil
}

// Seal closes the current layer as the writes of epoch; they are committed by
// the first Store.Commit(n) with n >= epoch. Sealing when nothing was written
// since the last Seal adds no layer. Epochs passed to Seal must never
// decrease; Seal panics if one does.
func (t *Table) Seal(epoch uint64) {
	if epoch < t.lastSealed {
		panic(fmt.Sprintf("state: table %d sealed epoch %d after epoch %d", t.id, epoch, t.lastSealed))
	}
	t.lastSealed = epoch
	l := t.cur
	if l == nil {
		return
	}
	t.cur = nil
	l.epoch = epoch
	t.mu.Lock()
	old := *t.sealed.Load()
	next := make([]*layer, len(old), len(old)+1)
	copy(next, old)
	next = append(next, l)
	t.sealed.Store(&next)
	t.mu.Unlock()
}

// UncommittedBytes returns the approximate key and value bytes of t's writes
// that are not committed yet (current and sealed layers): the memory the
// table holds beyond Pebble. For metrics and backpressure; owner only.
func (t *Table) UncommittedBytes() int64 {
	var n int64
	if t.cur != nil {
		n += t.cur.bytes
	}
	for _, l := range *t.sealed.Load() {
		n += l.bytes
	}
	return n
}

// writeLayer returns the current layer, creating it if needed.
func (t *Table) writeLayer() *layer {
	if t.cur == nil {
		t.cur = newLayer()
	}
	return t.cur
}

// takeCommittable returns the sealed layers with epoch <= epoch, oldest first.
// Called by the committer.
func (t *Table) takeCommittable(epoch uint64) []*layer {
	sealed := *t.sealed.Load()
	n := 0
	for n < len(sealed) && sealed[n].epoch <= epoch {
		n++
	}
	return sealed[:n]
}

// dropCommitted removes the n oldest sealed layers after they were committed.
// Called by the committer; Seal only appends, so they are still the oldest.
func (t *Table) dropCommitted(n int) {
	if n == 0 {
		return
	}
	t.mu.Lock()
	old := *t.sealed.Load()
	var dropped int64
	for _, l := range old[:n] {
		dropped += l.bytes
	}
	next := make([]*layer, len(old)-n)
	copy(next, old[n:])
	t.sealed.Store(&next)
	t.mu.Unlock()
	t.pending.Add(-dropped)
}

// tableKeyPrefix returns the Pebble key prefix of table id.
func tableKeyPrefix(id TableID) []byte {
	p := make([]byte, 5)
	p[0] = tablePrefix
	binary.BigEndian.PutUint32(p[1:], uint32(id))
	return p
}

// entry is one point write of a layer: a value or, if del, a deletion. The
// B-tree holds entries inline and moves them as it inserts, so they are kept
// small: key and value share one slice.
type entry struct {
	// pfx is keyPrefix(key): most comparisons end on it without loading key.
	pfx  prefix
	kv   []byte // key, then value
	klen uint32
	del  bool
}

// newEntry returns the entry of key kv[:klen] and value kv[klen:].
func newEntry(kv []byte, klen int, del bool) entry {
	return entry{pfx: keyPrefix(kv[:klen]), kv: kv, klen: uint32(klen), del: del}
}

// probe returns the entry to search for key.
func probe(key []byte) entry { return newEntry(key, len(key), false) }

func (e entry) key() []byte { return e.kv[:e.klen:e.klen] }

// value returns the entry's value, nil for a deletion.
func (e entry) value() []byte {
	if e.del {
		return nil
	}
	return e.kv[e.klen:]
}

// entryLess orders entries by key. Keys that tie on their prefixes and are
// both at least prefixLen long share those bytes, so only the rest is
// compared; shorter keys (zero padded) are compared whole.
func entryLess(a, b entry) bool {
	for i := range a.pfx {
		if a.pfx[i] != b.pfx[i] {
			return a.pfx[i] < b.pfx[i]
		}
	}
	if a.klen >= prefixLen && b.klen >= prefixLen {
		return bytes.Compare(a.kv[prefixLen:a.klen], b.kv[prefixLen:b.klen]) < 0
	}
	return bytes.Compare(a.kv[:a.klen], b.kv[:b.klen]) < 0
}

// prefixWords is the number of big-endian words of a key an entry holds
// inline. Keys of vnode-keyed state start with the vnode and an encoded
// group or join key (2 + 9 bytes for an int64), so one word ties for every
// key of a vnode; three reach into the column after the group key.
const (
	prefixWords = 3
	prefixLen   = 8 * prefixWords
)

// prefix is the first prefixLen bytes of a key as big-endian words, padded
// with zeros.
type prefix [prefixWords]uint64

// keyPrefix returns the prefix of key. Padding sorts like a shorter key, so
// keyPrefix(a) < keyPrefix(b) (word by word) implies a < b.
func keyPrefix(key []byte) prefix {
	var p prefix
	for i := range p {
		if len(key) >= 8 {
			p[i] = binary.BigEndian.Uint64(key)
			key = key[8:]
			continue
		}
		var w uint64
		for j, c := range key {
			w |= uint64(c) << (56 - 8*j)
		}
		p[i] = w
		break
	}
	return p
}

// span is a range deletion [start, end); nil bounds are unbounded.
type span struct {
	start, end []byte
}

func (s span) contains(key []byte) bool {
	return (s.start == nil || bytes.Compare(key, s.start) >= 0) &&
		(s.end == nil || bytes.Compare(key, s.end) < 0)
}

// layer is one epoch's writes (or the current writes) of a table. Its range
// deletions hide keys of older layers and Pebble only: a point write after a
// range deletion in the same layer is kept, one before it is removed from
// points when the deletion is applied. A layer is immutable once sealed.
type layer struct {
	epoch  uint64
	points *btree.BTreeG[entry]
	// dels are sorted by start, disjoint and not adjacent. The slice is
	// replaced, never modified, so that iterators may keep it.
	dels  []span
	arena arena
	bytes int64 // key and value bytes of points and dels
}

func newLayer() *layer {
	return &layer{points: btree.NewBTreeGOptions(entryLess, btree.Options{NoLocks: true})}
}

func (l *layer) set(e entry) {
	if old, replaced := l.points.Set(e); replaced {
		l.bytes -= int64(len(old.kv))
	}
	l.bytes += int64(len(e.kv))
}

func (l *layer) get(key []byte) (entry, bool) {
	return l.points.Get(probe(key))
}

// covers reports whether a range deletion of l covers key.
func (l *layer) covers(key []byte) bool {
	_, ok := coveringSpan(l.dels, key)
	return ok
}

// coveringSpan returns the span of dels (sorted, disjoint) that covers key.
func coveringSpan(dels []span, key []byte) (span, bool) {
	if len(dels) == 0 {
		return span{}, false
	}
	// The first span whose end is after key is the only candidate.
	i := sort.Search(len(dels), func(i int) bool {
		return dels[i].end == nil || bytes.Compare(dels[i].end, key) > 0
	})
	if i < len(dels) && dels[i].contains(key) {
		return dels[i], true
	}
	return span{}, false
}

// deleteRange applies a range deletion: it removes the layer's own points in
// sp and merges sp into dels.
func (l *layer) deleteRange(sp span) {
	if sp.start == nil && sp.end == nil {
		l.points.Clear()
		l.dels = []span{sp}
		l.bytes = 0
		return
	}
	var doomed []entry
	it := l.points.Iter()
	var ok bool
	if sp.start == nil {
		ok = it.First()
	} else {
		ok = it.Seek(probe(sp.start))
	}
	for ; ok && (sp.end == nil || bytes.Compare(it.Item().key(), sp.end) < 0); ok = it.Next() {
		doomed = append(doomed, it.Item())
	}
	it.Release()
	for _, e := range doomed {
		l.points.Delete(e)
		l.bytes -= int64(len(e.kv))
	}
	// Merge sp with every span it overlaps or touches.
	next := make([]span, 0, len(l.dels)+1)
	for _, d := range l.dels {
		l.bytes -= int64(len(d.start) + len(d.end))
		switch {
		case d.end != nil && sp.start != nil && bytes.Compare(d.end, sp.start) < 0:
			next = append(next, d) // d is entirely before sp
		case sp.end != nil && d.start != nil && bytes.Compare(sp.end, d.start) < 0:
			next = append(next, d) // d is entirely after sp; sorted below
		default:
			if d.start == nil || (sp.start != nil && bytes.Compare(d.start, sp.start) < 0) {
				sp.start = d.start
			}
			if sp.end != nil && (d.end == nil || bytes.Compare(d.end, sp.end) > 0) {
				sp.end = d.end
			}
		}
	}
	next = append(next, sp)
	sort.Slice(next, func(i, j int) bool {
		return next[i].start == nil || (next[j].start != nil && bytes.Compare(next[i].start, next[j].start) < 0)
	})
	for _, d := range next {
		l.bytes += int64(len(d.start) + len(d.end))
	}
	l.dels = next
}

// deleteRanges applies the range deletions sps (sorted, disjoint, none
// unbounded): it removes the layer's own points in them and merges them
// into dels in one pass.
func (l *layer) deleteRanges(sps []span) {
	var doomed []entry
	it := l.points.Iter()
	for _, sp := range sps {
		for ok := it.Seek(probe(sp.start)); ok && bytes.Compare(it.Item().key(), sp.end) < 0; ok = it.Next() {
			doomed = append(doomed, it.Item())
		}
	}
	it.Release()
	for _, e := range doomed {
		l.points.Delete(e)
		l.bytes -= int64(len(e.kv))
	}
	all := make([]span, 0, len(l.dels)+len(sps))
	all = append(append(all, l.dels...), sps...)
	sort.Slice(all, func(i, j int) bool {
		return all[i].start == nil || (all[j].start != nil && bytes.Compare(all[i].start, all[j].start) < 0)
	})
	for _, d := range l.dels {
		l.bytes -= int64(len(d.start) + len(d.end))
	}
	next := all[:0:0]
	for _, d := range all {
		if n := len(next); n > 0 {
			last := &next[n-1]
			// d starts at or before the end of last: merge (touching
			// spans merge too, as in deleteRange).
			if last.end == nil || bytes.Compare(d.start, last.end) <= 0 {
				if last.end != nil && (d.end == nil || bytes.Compare(d.end, last.end) > 0) {
					last.end = d.end
				}
				continue
			}
		}
		next = append(next, d)
	}
	for _, d := range next {
		l.bytes += int64(len(d.start) + len(d.end))
	}
	l.dels = next
}

func (l *layer) empty() bool { return l.points.Len() == 0 && len(l.dels) == 0 }

// arena hands out byte slices carved from larger chunks. Memory is never
// reused: a slice stays valid (and unchanged) for as long as it is referenced,
// which is what lets Get return values without copying and iterators keep
// pointing at entries after the owner writes again.
type arena struct {
	chunk []byte
	next  int // size of the next chunk
}

const (
	minArenaChunk = 4 << 10
	maxArenaChunk = 1 << 20
)

// alloc returns a zeroed slice of length n and capacity n.
func (a *arena) alloc(n int) []byte {
	if n > cap(a.chunk)-len(a.chunk) {
		if a.next == 0 {
			a.next = minArenaChunk
		}
		if n > a.next/4 {
			return make([]byte, n) // large values get their own allocation
		}
		a.chunk = make([]byte, 0, a.next)
		if a.next < maxArenaChunk {
			a.next *= 2
		}
	}
	s := a.chunk[len(a.chunk) : len(a.chunk)+n : len(a.chunk)+n]
	a.chunk = a.chunk[:len(a.chunk)+n]
	return s
}

// clone copies b into the arena; nil stays nil and empty stays empty.
func (a *arena) clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	c := a.alloc(len(b))
	copy(c, b)
	return c
}
