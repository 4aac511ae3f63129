package state

import (
	"fmt"
	"sync"
	"testing"
)

func sealedKeys(t *testing.T, tbl *Table, epoch uint64) []string {
	t.Helper()
	it, err := tbl.NewSealedIter(epoch, nil, nil)
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
	return out
}

func TestSealedIterEpochs(t *testing.T) {
	s, err := Open(MemoryDir, Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tbl := s.Table(7)
	tbl.Put([]byte("a"), []byte("1"))
	tbl.Put([]byte("b"), []byte("1"))
	tbl.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	tbl.Put([]byte("c"), []byte("2"))
	tbl.Delete([]byte("a"))
	tbl.Seal(2)
	tbl.Put([]byte("b"), []byte("3"))
	tbl.Seal(3)
	tbl.Put([]byte("d"), []byte("cur"))

	check := func(epoch uint64, want string) {
		t.Helper()
		if got := fmt.Sprint(sealedKeys(t, tbl, epoch)); got != want {
			t.Errorf("as of %d: got %s, want %s", epoch, got, want)
		}
	}
	check(1, "[a=1 b=1]")
	check(2, "[b=1 c=2]")
	check(3, "[b=3 c=2]")
	if _, err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	check(2, "[b=1 c=2]")
	check(3, "[b=3 c=2]")
	if _, err := s.Commit(3); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.NewSealedIter(2, nil, nil); err == nil {
		t.Errorf("read as of 2 after epoch 3 committed: no error")
	}
}

// TestSealedIterShards reads a table written by several actors, each on its
// own handle (TableShard), as of epochs none of them has committed: every
// handle's sealed layers are in the read, on whichever handle it is made,
// and a later epoch's range deletion on one handle hides an earlier write
// of another.
func TestSealedIterShards(t *testing.T) {
	s, err := Open(MemoryDir, Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h0, h1, h2 := s.Table(7), s.TableShard(7, 1), s.TableShard(7, 2)
	h0.Put([]byte("a"), []byte("1"))
	h1.Put([]byte("b"), []byte("1"))
	h0.Seal(1)
	h1.Seal(1)
	h2.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	h1.Put([]byte("b"), []byte("2"))
	h2.Put([]byte("c"), []byte("2"))
	h0.Seal(2)
	h1.Seal(2)
	h2.Seal(2)
	h2.DeleteRange(nil, nil)
	h2.Put([]byte("d"), []byte("3"))
	h0.Seal(3)
	h1.Seal(3)
	h2.Seal(3)
	h1.Put([]byte("e"), []byte("cur"))
	for _, h := range []*Table{h0, h1, h2} {
		if got, want := fmt.Sprint(sealedKeys(t, h, 2)), "[a=1 b=2 c=2]"; got != want {
			t.Errorf("handle %p as of 2: got %s, want %s", h, got, want)
		}
		if got, want := fmt.Sprint(sealedKeys(t, h, 3)), "[d=3]"; got != want {
			t.Errorf("handle %p as of 3: got %s, want %s", h, got, want)
		}
	}
}

// TestSealedIterConcurrent reads a table as of sealed epochs while its owner
// writes and seals later epochs and a committer commits: every read must see
// exactly the epoch's keys (run with -race).
func TestSealedIterConcurrent(t *testing.T) {
	s, err := Open(MemoryDir, Options{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tbl := s.Table(9)
	const epochs = 200
	sealed := make(chan uint64, epochs)
	acked := make(chan uint64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the owner: epoch e writes key e and rewrites key 0
		defer wg.Done()
		for e := uint64(1); e <= epochs; e++ {
			tbl.Put([]byte(fmt.Sprintf("k%04d", e)), []byte("v"))
			tbl.Put([]byte("k0000"), []byte(fmt.Sprint(e)))
			tbl.Seal(e)
			sealed <- e
			// Writes of the next epoch go on while the reader reads e.
			tbl.Put([]byte(fmt.Sprintf("k%04d", e+1)), []byte("early"))
			tbl.Delete([]byte(fmt.Sprintf("k%04d", e+1)))
		}
		close(sealed)
	}()
	wg.Add(1)
	go func() { // the committer commits e once the reader is done with it
		defer wg.Done()
		for e := range acked {
			if _, err := s.Commit(e); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for e := range sealed {
		got := sealedKeys(t, tbl, e)
		if len(got) != int(e)+1 || got[0] != fmt.Sprintf("k0000=%d", e) || got[len(got)-1] != fmt.Sprintf("k%04d=v", e) {
			t.Fatalf("as of %d: %d keys, first %s last %s", e, len(got), got[0], got[len(got)-1])
		}
		acked <- e
	}
	close(acked)
	wg.Wait()
}
