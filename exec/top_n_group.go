package exec

import (
	"bytes"
	"encoding/binary"
	"sort"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
)

// topNRow is one input row of a TopN group. Its byte slices are immutable
// once made and may be shared (by a group's cache, its window as emitted and
// its boundary).
type topNRow struct {
	// key is the row's state key after the group key: the order key, then
	// the input stream key (or arrival number).
	key []byte
	// ord is the length of the order key at the front of key: rows whose
	// keys share it are peers.
	ord int
	// row is the input row (RowCodec encoding).
	row []byte
}

func (r topNRow) peer(o topNRow) bool { return bytes.Equal(r.key[:r.ord], o.key[:o.ord]) }

// topNOut is a row of a group's window with its number.
type topNOut struct {
	topNRow
	rank int64
}

// topNGroup is the in-memory part of one group of a TopN: a cache of the
// group's first rows, and what the current epoch needs.
//
// Invariant: rows are the first len(rows) rows of the group as stored in the
// state table, in key order; complete means they are all of them. An empty
// cache that is not complete is one that was not read yet.
type topNGroup struct {
	// key is the group's state key prefix: its virtual node, then the
	// group key.
	key      []byte
	rows     []topNRow
	complete bool
	// scanned is the number of rows the last window computation examined;
	// the cache keeps at least that many.
	scanned int
	// used is the CLOCK bit; slot is the group's index in TopN.clock.
	used bool
	slot int
	// charged is what the group is charged in the operator caches' pool.
	charged int64

	// touched is set at the group's first change of the epoch, when old
	// gets the window as emitted before the epoch and the boundary below is
	// computed; dirty once a change may have altered the window.
	touched, dirty bool
	old            []topNOut
	// The boundary of the window as emitted: open if the group's rows all
	// fitted (any change may alter the window); otherwise, if bounded, a
	// change can alter the window only if it sorts at or before bound (for
	// peer-including kinds, if its order key is at most bound's); if
	// neither, no change can (an empty window of LIMIT 0).
	open, bounded bool
	bound         topNRow
}

// fill makes sure the cache holds row p of the group, reading more rows from
// the state table if needed; it reports false if the group has no row p.
// It reads geometrically more rows each time, at least the cache capacity.
func (t *TopN) fill(g *topNGroup, p int) (bool, error) {
	if p < len(g.rows) {
		return true, nil
	}
	if g.complete {
		return false, nil
	}
	want := max(p+1, t.capacity, 2*len(g.rows))
	t.lowBuf = append(t.lowBuf[:0], g.key...)
	if n := len(g.rows); n > 0 {
		// The first key after the last cached one.
		t.lowBuf = append(append(t.lowBuf, g.rows[n-1].key...), 0)
	}
	t.highBuf = state.AppendPrefixEnd(t.highBuf[:0], g.key)
	var upper []byte
	if len(t.highBuf) > 0 {
		upper = t.highBuf
	}
	it, err := t.spec.Table.NewIter(t.lowBuf, upper)
	if err != nil {
		return false, err
	}
	ok := it.First()
	for ; ok && len(g.rows) < want; ok = it.Next() {
		r, err := storedRow(it.Key()[len(g.key):], it.Value())
		if err != nil {
			_ = it.Close()
			return false, err
		}
		g.rows = append(g.rows, r)
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if !ok {
		g.complete = true
	}
	return p < len(g.rows), nil
}

// storedRow copies a row read from the state table (key after the group
// key, and value).
func storedRow(key, value []byte) (topNRow, error) {
	ord, n := binary.Uvarint(value)
	if n <= 0 || int(ord) > len(key) {
		return topNRow{}, errCorruptState
	}
	return newTopNRow(key, int(ord), value[n:]), nil
}

// newTopNRow copies key and row into one allocation.
func newTopNRow(key []byte, ord int, row []byte) topNRow {
	buf := make([]byte, len(key)+len(row))
	copy(buf, key)
	copy(buf[len(key):], row)
	return topNRow{key: buf[:len(key):len(key)], ord: ord, row: buf[len(key):]}
}

// search returns the position of key in the cache and whether it is there.
func (g *topNGroup) search(key []byte) (int, bool) {
	i := sort.Search(len(g.rows), func(i int) bool { return bytes.Compare(g.rows[i].key, key) >= 0 })
	return i, i < len(g.rows) && bytes.Equal(g.rows[i].key, key)
}

// covers reports whether key, if it is a row of the group, is in the cache.
func (g *topNGroup) covers(key []byte) bool {
	return g.complete || len(g.rows) > 0 && bytes.Compare(key, g.rows[len(g.rows)-1].key) <= 0
}

// insert adds a row to the cache if it belongs there, dropping the last
// cached row beyond keep rows.
func (g *topNGroup) insert(key []byte, ord int, row []byte, keep int) {
	if !g.complete && (len(g.rows) == 0 || bytes.Compare(key, g.rows[len(g.rows)-1].key) > 0) {
		return
	}
	i, found := g.search(key)
	r := newTopNRow(key, ord, row)
	if found {
		g.rows[i] = r
		return
	}
	g.rows = append(g.rows, topNRow{})
	copy(g.rows[i+1:], g.rows[i:])
	g.rows[i] = r
	if len(g.rows) > keep {
		g.trim(keep)
	}
}

// remove drops a row from the cache, if it is there.
func (g *topNGroup) remove(key []byte) {
	if i, found := g.search(key); found {
		copy(g.rows[i:], g.rows[i+1:])
		g.rows[len(g.rows)-1] = topNRow{}
		g.rows = g.rows[:len(g.rows)-1]
	}
}

// trim keeps the first n cached rows.
func (g *topNGroup) trim(n int) {
	if len(g.rows) <= n {
		return
	}
	clear(g.rows[n:])
	g.rows = g.rows[:n]
	g.complete = false
}

// window computes the group's current window into dst, in key order, with
// each row's number, reading rows into the cache as needed, and sets the
// group's boundary and scanned count.
func (t *TopN) window(g *topNGroup, dst []topNOut) ([]topNOut, error) {
	offset, end, limit := t.spec.Offset, t.end, t.spec.Limit
	var rank, dense int64
	prevIn := false
	g.open, g.bounded = false, false
	for p := 0; ; p++ {
		ok, err := t.fill(g, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			g.open = true
			g.scanned = p
			return dst, nil
		}
		r := g.rows[p]
		pos := int64(p)
		peer := p > 0 && r.peer(g.rows[p-1])
		if !peer {
			rank = pos + 1
			dense++
		}
		var in, stop bool
		num := pos + 1
		switch t.spec.Kind {
		case ir.RowNumber:
			in, stop = pos >= offset && pos < end, pos >= end
		case ir.Rank:
			in, stop, num = rank > offset && rank <= end, rank > end, rank
		case ir.DenseRank:
			in, stop, num = dense > offset && dense <= end, dense > end, dense
		case ir.WithTies:
			in = pos >= offset && pos < end || pos >= end && limit > 0 && peer && prevIn
			stop = pos >= end && !in
		}
		if stop {
			g.scanned = p + 1
			if p > 0 {
				g.bounded, g.bound = true, g.rows[p-1]
			}
			return dst, nil
		}
		if in {
			dst = append(dst, topNOut{topNRow: r, rank: num})
		}
		prevIn = in
	}
}

// inside reports whether a change of the row with key (order key: its first
// ord bytes) may alter the group's window as emitted before the epoch.
func (t *TopN) inside(g *topNGroup, key []byte, ord int) bool {
	switch {
	case g.open:
		return true
	case !g.bounded:
		return false
	case t.spec.Kind == ir.RowNumber:
		return bytes.Compare(key, g.bound.key) <= 0
	}
	return bytes.Compare(key[:ord], g.bound.key[:g.bound.ord]) <= 0
}

// bytes estimates the memory the group holds between epochs (see
// cache_budget.go).
func (g *topNGroup) bytes() int64 {
	n := groupOverhead + 2*len(g.key)
	for _, r := range g.rows {
		n += topNRowOverhead + len(r.key) + len(r.row)
	}
	return int64(n)
}
