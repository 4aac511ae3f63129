package state

import (
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// scanAll returns the keys and values of tb in [lower, upper) as "k=v"
// words.
func scanAll(t *testing.T, tb *Table, lower, upper string) string {
	t.Helper()
	var lo, hi []byte
	if lower != "" {
		lo = []byte(lower)
	}
	if upper != "" {
		hi = []byte(upper)
	}
	it, err := tb.NewIter(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

// TestOverlay checks that an overlay reads its own writes over its
// snapshot, that it is never committed, that a snapshot change shows the
// newer committed rows under the same writes, and that clones are
// independent.
func TestOverlay(t *testing.T) {
	s := openStore(t, "db", vfs.NewMem())
	defer s.Close()
	tb := s.Table(7)
	for _, k := range []string{"a", "b", "c"} {
		tb.Put([]byte(k), []byte(k+"0"))
	}
	tb.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	o := s.NewOverlay(7, snap)
	o.Put([]byte("b"), []byte("b1"))
	o.Delete([]byte("c"))
	o.Put([]byte("d"), []byte("d1"))
	if got := scanAll(t, o, "", ""); got != "a=a0 b=b1 d=d1" {
		t.Fatalf("overlay scan: %s", got)
	}
	if got := scanAll(t, o, "b", "d"); got != "b=b1" {
		t.Fatalf("overlay range scan: %s", got)
	}
	if v, ok := mustGet(t, o, "a"); !ok || v != "a0" {
		t.Fatalf("get through: %q %v", v, ok)
	}
	if _, ok := mustGet(t, o, "c"); ok {
		t.Fatal("deleted key visible")
	}
	if _, ok, written := o.Written([]byte("a")); ok || written {
		t.Fatal("Written reports a key the overlay did not write")
	}
	if _, ok, written := o.Written([]byte("c")); ok || !written {
		t.Fatal("Written misses a deletion")
	}

	// A clone keeps its state; writes to either do not reach the other.
	c := o.Clone()
	o.Put([]byte("a"), []byte("a2"))
	c.Put([]byte("e"), []byte("e1"))
	if got := scanAll(t, c, "", ""); got != "a=a0 b=b1 d=d1 e=e1" {
		t.Fatalf("clone: %s", got)
	}
	if got := scanAll(t, o, "", ""); got != "a=a2 b=b1 d=d1" {
		t.Fatalf("original after clone: %s", got)
	}

	// Commits ignore overlays; a newer snapshot shows newer rows under them.
	tb.Put([]byte("f"), []byte("f0"))
	tb.Put([]byte("b"), []byte("b9"))
	tb.Seal(2)
	if _, err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if got := scanAll(t, tb, "", ""); got != "a=a0 b=b9 c=c0 f=f0" {
		t.Fatalf("committed table: %s", got)
	}
	snap = s.Snapshot()
	defer snap.Release()
	o.SetBase(snap)
	if got := scanAll(t, o, "", ""); got != "a=a2 b=b1 d=d1 f=f0" {
		t.Fatalf("overlay over the newer snapshot: %s", got)
	}
	o.SetBase(nil)
	if got := scanAll(t, o, "", ""); got != "a=a2 b=b1 d=d1" {
		t.Fatalf("overlay without a base: %s", got)
	}
	var writes []string
	o.Writes(func(k, v []byte, del bool) bool {
		if del {
			v = []byte("-")
		}
		writes = append(writes, string(k)+"="+string(v))
		return true
	})
	if got := strings.Join(writes, " "); got != "a=a2 b=b1 c=- d=d1" {
		t.Fatalf("writes: %s", got)
	}
	if o.Len() != 4 {
		t.Fatalf("Len %d", o.Len())
	}
}
