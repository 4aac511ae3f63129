package state

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestUncommittedBytes follows the store's uncommitted bytes through writes,
// overwrites, range deletions, shards, seals and commits.
func TestUncommittedBytes(t *testing.T) {
	s := openStore(t, "db", vfs.NewMem())
	defer s.Close()
	a, b := s.Table(1), s.TableShard(1, 1)
	if n := s.UncommittedBytes(); n != 0 {
		t.Fatalf("fresh store: %d", n)
	}
	a.Put([]byte("k1"), []byte("value"))
	a.Put([]byte("k1"), []byte("v")) // replaces: 2 + 1 bytes, not 2 + 5 more
	b.Put([]byte("k2"), []byte("xyz"))
	if n := s.UncommittedBytes(); n != 3+5 {
		t.Fatalf("after writes: %d, want 8", n)
	}
	a.Seal(1)
	b.Seal(1)
	a.Put([]byte("k3"), []byte("abc")) // epoch 2
	if n := s.UncommittedBytes(); n != 8+5 {
		t.Fatalf("after seal and a write: %d, want 13", n)
	}
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	if n := s.UncommittedBytes(); n != 5 {
		t.Fatalf("after committing epoch 1: %d, want 5", n)
	}
	a.DeleteRange(nil, nil) // drops k3, adds an unbounded span
	a.Seal(2)
	if _, err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	if n := s.UncommittedBytes(); n != 0 {
		t.Fatalf("after committing everything: %d", n)
	}
	c := s.Table(9)
	c.Put([]byte("scratch"), []byte("row"))
	s.ReleaseTable(9) // its writes are dropped, and no longer counted
	if n := s.UncommittedBytes(); n != 0 {
		t.Fatalf("after releasing a table: %d", n)
	}
}
