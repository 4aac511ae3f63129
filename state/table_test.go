package state

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The randomized test below drives tables through writes, range deletions,
// seals, commits and restarts, and checks every read (Get, iterators held
// across later writes, snapshots) against a simple model: the committed map,
// the sealed epochs' operations and the current operations.

type modelOp struct {
	del    bool   // point or range deletion
	ranged bool   // DeleteRange(key, hi)
	key    []byte // the key, or the lower bound of a range (nil: unbounded)
	hi     []byte // upper bound of a range (nil: unbounded)
	val    []byte
}

func (op modelOp) apply(m map[string]string) {
	switch {
	case op.ranged:
		for k := range m {
			if (op.key == nil || k >= string(op.key)) && (op.hi == nil || k < string(op.hi)) {
				delete(m, k)
			}
		}
	case op.del:
		delete(m, string(op.key))
	default:
		m[string(op.key)] = string(op.val)
	}
}

type modelLayer struct {
	epoch uint64
	ops   []modelOp
}

type tableModel struct {
	committed map[string]string
	sealed    []modelLayer
	cur       []modelOp
}

func (m *tableModel) view() map[string]string {
	v := maps.Clone(m.committed)
	for _, l := range m.sealed {
		for _, op := range l.ops {
			op.apply(v)
		}
	}
	for _, op := range m.cur {
		op.apply(v)
	}
	return v
}

func (m *tableModel) seal(epoch uint64) {
	if len(m.cur) > 0 {
		m.sealed = append(m.sealed, modelLayer{epoch, m.cur})
		m.cur = nil
	}
}

func (m *tableModel) commit(epoch uint64) {
	for len(m.sealed) > 0 && m.sealed[0].epoch <= epoch {
		for _, op := range m.sealed[0].ops {
			op.apply(m.committed)
		}
		m.sealed = m.sealed[1:]
	}
}

type kv struct{ k, v string }

// sortedRange returns the pairs of m in [lower, upper), in key order.
func sortedRange(m map[string]string, lower, upper []byte) []kv {
	var out []kv
	for k, v := range m {
		if (lower == nil || k >= string(lower)) && (upper == nil || k < string(upper)) {
			out = append(out, kv{k, v})
		}
	}
	slices.SortFunc(out, func(a, b kv) int { return bytes.Compare([]byte(a.k), []byte(b.k)) })
	return out
}

// randKey returns a short key over an alphabet with the edge bytes.
func randKey(r *rand.Rand) []byte {
	alphabet := []byte{0x00, 0x01, 'a', 0xFF}
	k := make([]byte, r.IntN(4))
	for i := range k {
		k[i] = alphabet[r.IntN(len(alphabet))]
	}
	return k
}

func randBound(r *rand.Rand) []byte {
	if r.IntN(3) == 0 {
		return nil
	}
	return randKey(r)
}

// checkIter runs random moves on it and on a model iterator over want (the
// expected pairs within the iterator's bounds).
func checkIter(t *testing.T, r *rand.Rand, it *Iter, want []kv, what string) {
	t.Helper()
	pos, valid, dir := 0, false, 0
	var trace []string
	for step := 0; step < 30; step++ {
		var ok bool
		switch op := r.IntN(10); {
		case op == 0:
			ok = it.First()
			pos, valid, dir = 0, len(want) > 0, 1
			trace = append(trace, "First")
		case op == 1:
			ok = it.Last()
			pos, valid, dir = len(want)-1, len(want) > 0, -1
			trace = append(trace, "Last")
		case op == 2:
			k := randKey(r)
			ok = it.SeekGE(k)
			pos = sort.Search(len(want), func(i int) bool { return want[i].k >= string(k) })
			valid, dir = pos < len(want), 1
			trace = append(trace, fmt.Sprintf("SeekGE(%x)", k))
		case op == 3:
			k := randKey(r)
			ok = it.SeekLT(k)
			pos = sort.Search(len(want), func(i int) bool { return want[i].k >= string(k) }) - 1
			valid, dir = pos >= 0, -1
			trace = append(trace, fmt.Sprintf("SeekLT(%x)", k))
		case op < 7:
			ok = it.Next()
			trace = append(trace, "Next")
			switch {
			case valid:
				pos++
				valid, dir = pos < len(want), 1
			case dir <= 0:
				pos, valid, dir = 0, len(want) > 0, 1
			}
		default:
			ok = it.Prev()
			trace = append(trace, "Prev")
			switch {
			case valid:
				pos--
				valid, dir = pos >= 0, -1
			case dir >= 0:
				pos, valid, dir = len(want)-1, len(want) > 0, -1
			}
		}
		if err := it.Error(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok != valid || it.Valid() != valid {
			t.Fatalf("%s: after %v: valid %v, want %v (model %v)", what, trace, ok, valid, want)
		}
		if valid && (string(it.Key()) != want[pos].k || string(it.Value()) != want[pos].v) {
			t.Fatalf("%s: after %v: at %x=%q, want %x=%q", what, trace, it.Key(), it.Value(), want[pos].k, want[pos].v)
		}
	}
}

type heldIter struct {
	it   *Iter
	want []kv
	what string
	view map[string]string // the table as of NewIter, for SetBounds
}

type heldSnap struct {
	sn        *Snapshot
	committed []map[string]string // per table
}

func TestTableRandomized(t *testing.T) {
	r := newRand(t)
	for run := range 4 {
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			runTableRandomized(t, rand.New(rand.NewPCG(r.Uint64(), r.Uint64())), 2500)
		})
	}
}

func runTableRandomized(t *testing.T, r *rand.Rand, steps int) {
	fs := vfs.NewMem()
	s := openStore(t, "db", fs)
	ids := []TableID{1, math.MaxUint32} // the last id exercises the end of the key space
	tables := make([]*Table, len(ids))
	models := make([]*tableModel, len(ids))
	for i, id := range ids {
		tables[i] = s.Table(id)
		models[i] = &tableModel{committed: map[string]string{}}
	}
	var epoch, committed uint64
	var iters []heldIter
	var snaps []heldSnap
	closeAll := func() {
		for _, h := range iters {
			checkIter(t, r, h.it, h.want, h.what)
			h.it.Close()
		}
		iters = nil
		for _, h := range snaps {
			h.sn.Release()
		}
		snaps = nil
	}

	for step := 0; step < steps; step++ {
		ti := r.IntN(len(tables))
		tb, m := tables[ti], models[ti]
		switch op := r.IntN(100); {
		case op < 30:
			k, v := randKey(r), []byte(fmt.Sprint(step))
			tb.Put(k, v)
			m.cur = append(m.cur, modelOp{key: k, val: v})
		case op < 40:
			k := randKey(r)
			tb.Delete(k)
			m.cur = append(m.cur, modelOp{del: true, key: k})
		case op < 43:
			lo, hi := randBound(r), randBound(r)
			tb.DeleteRange(lo, hi)
			if lo == nil || hi == nil || bytes.Compare(lo, hi) < 0 {
				m.cur = append(m.cur, modelOp{del: true, ranged: true, key: lo, hi: hi})
			}
		case op < 44:
			tb.Clear()
			m.cur = append(m.cur, modelOp{del: true, ranged: true})
		case op < 50:
			epoch++
			for i := range tables {
				tables[i].Seal(epoch)
				models[i].seal(epoch)
			}
		case op < 54:
			if committed == epoch {
				epoch++ // an epoch in which no table wrote
			}
			e := committed + 1 + r.Uint64N(epoch-committed)
			if _, err := s.Commit(e); err != nil {
				t.Fatal(err)
			}
			committed = e
			for _, m := range models {
				m.commit(e)
			}
		case op < 55:
			closeAll()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, "db", fs)
			if s.CommittedEpoch() != committed {
				t.Fatalf("reopened at epoch %d, want %d", s.CommittedEpoch(), committed)
			}
			for i, id := range ids {
				tables[i] = s.Table(id)
				models[i].sealed, models[i].cur = nil, nil
			}
		case op < 70:
			view := m.view()
			for range 5 {
				k := randKey(r)
				v, ok, err := tb.Get(k)
				want, wantOK := view[string(k)]
				if err != nil || ok != wantOK || string(v) != want {
					t.Fatalf("step %d: table %d Get(%x) = %q %v %v, want %q %v", step, tb.ID(), k, v, ok, err, want, wantOK)
				}
			}
		case op < 85:
			lo, hi := randBound(r), randBound(r)
			it, err := tb.NewIter(lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			view := m.view()
			want := sortedRange(view, lo, hi)
			what := fmt.Sprintf("step %d: table %d iter [%x, %x)", step, tb.ID(), lo, hi)
			if r.IntN(4) == 0 {
				// Keep it open across later operations; it must not change.
				iters = append(iters, heldIter{it, want, what + " (held)", view})
				continue
			}
			checkIter(t, r, it, want, what)
			for range r.IntN(4) {
				lo, hi := randBound(r), randBound(r)
				it.SetBounds(lo, hi)
				checkIter(t, r, it, sortedRange(view, lo, hi), fmt.Sprintf("%s, then [%x, %x)", what, lo, hi))
			}
			it.Close()
		case op < 88:
			h := heldSnap{sn: s.Snapshot()}
			if h.sn.Epoch() != committed {
				t.Fatalf("snapshot at epoch %d, want %d", h.sn.Epoch(), committed)
			}
			for _, m := range models {
				h.committed = append(h.committed, maps.Clone(m.committed))
			}
			snaps = append(snaps, h)
		case op < 93 && len(snaps) > 0:
			i := r.IntN(len(snaps))
			h := snaps[i]
			for range 3 {
				k := randKey(r)
				v, ok, err := h.sn.Get(ids[ti], k)
				want, wantOK := h.committed[ti][string(k)]
				if err != nil || ok != wantOK || string(v) != want {
					t.Fatalf("step %d: snapshot@%d Get(%x) = %q %v %v, want %q %v",
						step, h.sn.Epoch(), k, v, ok, err, want, wantOK)
				}
			}
			lo, hi := randBound(r), randBound(r)
			it, err := h.sn.NewIter(ids[ti], lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			checkIter(t, r, it, sortedRange(h.committed[ti], lo, hi),
				fmt.Sprintf("step %d: snapshot@%d iter [%x, %x)", step, h.sn.Epoch(), lo, hi))
			it.Close()
			if r.IntN(2) == 0 {
				h.sn.Release()
				snaps = slices.Delete(snaps, i, i+1)
			}
		case op < 97 && len(iters) > 0:
			i := r.IntN(len(iters))
			if r.IntN(2) == 0 {
				// A held iterator moved to another range still reads the
				// table as of its creation.
				lo, hi := randBound(r), randBound(r)
				iters[i].it.SetBounds(lo, hi)
				iters[i].want = sortedRange(iters[i].view, lo, hi)
				iters[i].what += fmt.Sprintf(", then [%x, %x)", lo, hi)
			}
			checkIter(t, r, iters[i].it, iters[i].want, iters[i].what)
			iters[i].it.Close()
			iters = slices.Delete(iters, i, i+1)
		}
	}
	closeAll()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestKeyPrefixOrder(t *testing.T) {
	r := newRand(t)
	for range 10000 {
		a, b := randKey(r), randKey(r)
		if r.IntN(2) == 0 {
			a = append(a, randKey(r)...)
			a = append(a, randKey(r)...)
		}
		if c := bytes.Compare(a, b); (c < 0) != entryLess(probe(a), probe(b)) || (c > 0) != entryLess(probe(b), probe(a)) {
			t.Fatalf("entryLess disagrees with bytes.Compare on %x, %x", a, b)
		}
	}
}

func TestDeleteRangeSpans(t *testing.T) {
	l := newLayer()
	add := func(lo, hi string) {
		var a, b []byte
		if lo != "-" {
			a = []byte(lo)
		}
		if hi != "-" {
			b = []byte(hi)
		}
		l.deleteRange(span{a, b})
	}
	str := func() string {
		var out []string
		for _, d := range l.dels {
			lo, hi := "-", "-"
			if d.start != nil {
				lo = string(d.start)
			}
			if d.end != nil {
				hi = string(d.end)
			}
			out = append(out, "["+lo+","+hi+")")
		}
		return fmt.Sprint(out)
	}
	l.set(probe([]byte("c")))
	l.set(probe([]byte("m")))
	add("k", "n")
	add("b", "d")
	if got := str(); got != "[[b,d) [k,n)]" {
		t.Fatalf("spans %s", got)
	}
	if l.points.Len() != 0 {
		t.Fatalf("%d points left inside deleted spans", l.points.Len())
	}
	add("d", "e") // touches [b,d)
	add("x", "-")
	if got := str(); got != "[[b,e) [k,n) [x,-)]" {
		t.Fatalf("spans %s", got)
	}
	add("a", "z")
	if got := str(); got != "[[a,-)]" {
		t.Fatalf("spans %s", got)
	}
	add("-", "-")
	if got := str(); got != "[[-,-)]" {
		t.Fatalf("spans %s", got)
	}
	for _, k := range []string{"", "a", "\xff\xff"} {
		if !l.covers([]byte(k)) {
			t.Fatalf("%q not covered", k)
		}
	}
}

// TestEntryLessMatchesBytes checks the layer's order, which compares inline
// prefix words before the keys, against bytes.Compare, for keys around the
// prefix length made of bytes that collide with the zero padding.
func TestEntryLessMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() []byte {
		k := make([]byte, rng.IntN(prefixLen+10))
		for i := range k {
			k[i] = []byte{0, 0, 1, 0xff}[rng.IntN(4)]
		}
		return k
	}
	for range 200_000 {
		a, b := key(), key()
		if rng.IntN(2) == 0 {
			b = append(append([]byte(nil), a[:rng.IntN(len(a)+1)]...), b...)
		}
		if got, want := entryLess(probe(a), probe(b)), bytes.Compare(a, b) < 0; got != want {
			t.Fatalf("entryLess(%x, %x) = %v, want %v", a, b, got, want)
		}
	}
}
