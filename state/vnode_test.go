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
