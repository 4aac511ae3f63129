package state

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestVNodeOwnerMatchesRange(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 16, 256} {
		covered := 0
		for i := 0; i < n; i++ {
			lo, hi := VNodeRange(i, n)
			for v := lo; v < hi; v++ {
				if got := VNodeOwner(v, n); got != i {
					t.Fatalf("n=%d: vnode %d owned by %d, in the range of %d", n, v, got, i)
				}
			}
			covered += int(hi - lo)
		}
		if covered != VNodeCount {
			t.Fatalf("n=%d: ranges cover %d vnodes", n, covered)
		}
	}
}

func TestVNodeSpreadsKeys(t *testing.T) {
	var counts [VNodeCount]int
	const keys = 256 * 200
	for i := 0; i < keys; i++ {
		counts[VNode([]byte(fmt.Sprint(i)))]++
	}
	for v, c := range counts {
		if c < 100 || c > 300 {
			t.Fatalf("vnode %d got %d of %d keys", v, c, keys)
		}
	}
	if VNode([]byte("k")) != VNode([]byte("k")) {
		t.Fatal("VNode is not a function of the key")
	}
}

// The shards of a table are separate handles committed together: each sees
// its own writes, and a snapshot sees all of them.
func TestTableShardsCommitTogether(t *testing.T) {
	s := openStore(t, "db", vfs.NewMem())
	if s.TableShard(3, 0) != s.Table(3) {
		t.Fatal("shard 0 is not the table's handle")
	}
	a, b := s.TableShard(3, 0), s.TableShard(3, 1)
	if a == b || s.TableShard(3, 1) != b {
		t.Fatal("shard handles are not distinct and stable")
	}
	a.Put([]byte("a"), []byte("1"))
	b.Put([]byte("b"), []byte("2"))
	if _, ok, _ := a.Get([]byte("b")); ok {
		t.Fatal("shard 0 sees shard 1's uncommitted write")
	}
	a.Seal(1)
	b.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	defer snap.Release()
	for k, want := range map[string]string{"a": "1", "b": "2"} {
		v, ok, err := snap.Get(3, []byte(k))
		if err != nil || !ok || string(v) != want {
			t.Fatalf("key %s: %q %v %v", k, v, ok, err)
		}
	}
	if v, ok, _ := a.Get([]byte("b")); !ok || string(v) != "2" {
		t.Fatalf("shard 0 does not read shard 1's committed key: %q %v", v, ok)
	}
}

// DeleteRangeVNodes is DeleteRange over each virtual node of the range: a
// randomized comparison of the two, through sealed layers and commits, and
// of the layer's spans with those of one DeleteRange at a time.
func TestDeleteRangeVNodesMatchesDeleteRange(t *testing.T) {
	r := newRand(t)
	s := openStore(t, "db", vfs.NewMem())
	defer s.Close()
	got, want := s.Table(1), s.Table(2)
	key := func() []byte {
		k := AppendVNode(nil, uint16(r.IntN(8)))
		return append(k, byte('a'+r.IntN(6)), byte('a'+r.IntN(6)))
	}
	bound := func() []byte {
		if r.IntN(4) == 0 {
			return nil
		}
		return []byte{byte('a' + r.IntN(7))}
	}
	epoch := uint64(0)
	for step := 0; step < 2000; step++ {
		switch r.IntN(10) {
		case 0, 1:
			vs := VNodes{Lo: uint16(r.IntN(8))}
			vs.Hi = vs.Lo + uint16(r.IntN(4))
			lo, hi := bound(), bound()
			got.DeleteRangeVNodes(vs, lo, hi)
			if lo != nil && hi != nil && string(lo) >= string(hi) {
				continue
			}
			for v := vs.Lo; v < vs.Hi; v++ {
				hiKey := AppendVNode(nil, v+1)
				if hi != nil {
					hiKey = append(AppendVNode(nil, v), hi...)
				}
				want.DeleteRange(append(AppendVNode(nil, v), lo...), hiKey)
			}
		case 2:
			k := key()
			got.Delete(k)
			want.Delete(k)
		case 3:
			epoch++
			got.Seal(epoch)
			want.Seal(epoch)
			if r.IntN(2) == 0 {
				if _, err := s.Commit(epoch); err != nil {
					t.Fatal(err)
				}
			}
		default:
			k, v := key(), []byte(fmt.Sprint(step))
			got.Put(k, v)
			want.Put(k, v)
		}
		if gl, wl := got.cur, want.cur; gl != nil && wl != nil && fmt.Sprint(gl.dels) != fmt.Sprint(wl.dels) {
			t.Fatalf("step %d: spans %q, want %q", step, gl.dels, wl.dels)
		}
		if step%50 == 0 {
			if g, w := dumpTable(t, got), dumpTable(t, want); g != w {
				t.Fatalf("step %d:\n got %s\nwant %s", step, g, w)
			}
		}
	}
}

func dumpTable(t *testing.T, tb *Table) string {
	t.Helper()
	it, err := tb.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, fmt.Sprintf("%x=%s", it.Key(), it.Value()))
	}
	return fmt.Sprint(out)
}

func TestVNodeKeys(t *testing.T) {
	k := append(AppendVNode(nil, 0), "group"...)
	end := len(k)
	k = append(k, "rest"...)
	SetVNode(k, end)
	if KeyVNode(k) != VNode([]byte("group")) {
		t.Fatalf("prefix %d, want %d", KeyVNode(k), VNode([]byte("group")))
	}
	lo, hi := OwnedVNodes(1, 4).Bounds()
	if string(lo) != "\x00\x40" || string(hi) != "\x00\x80" {
		t.Fatalf("bounds %x %x", lo, hi)
	}
	if lo, hi = AllVNodes.Bounds(); string(lo) != "\x00\x00" || string(hi) != "\x01\x00" {
		t.Fatalf("bounds of all %x %x", lo, hi)
	}
}

// TestVNodeSpansCoalesce counts the spans DeleteRangeVNodes issues: one for
// the whole of every owned virtual node (their spans touch), one per virtual
// node when a bound leaves keys of each virtual node between them.
func TestVNodeSpansCoalesce(t *testing.T) {
	owned := OwnedVNodes(1, 2)
	n := int(owned.Hi - owned.Lo)
	for _, tc := range []struct {
		name         string
		lower, upper []byte
		want         int
	}{
		{"whole", nil, nil, 1},
		{"whole, empty lower", []byte{}, nil, 1},
		{"below upper", nil, []byte("m"), n},
		{"from lower", []byte("m"), nil, n},
		{"between", []byte("c"), []byte("m"), n},
	} {
		var a arena
		sps := vnodeSpans(&a, owned, tc.lower, tc.upper)
		if len(sps) != tc.want {
			t.Errorf("%s: %d spans, want %d", tc.name, len(sps), tc.want)
		}
	}
	var a arena
	sp := vnodeSpans(&a, owned, nil, nil)[0]
	if want := AppendVNode(nil, owned.Lo); string(sp.start) != string(want) {
		t.Errorf("start %x, want %x", sp.start, want)
	}
	if want := AppendVNode(nil, owned.Hi); string(sp.end) != string(want) {
		t.Errorf("end %x, want %x", sp.end, want)
	}
}
