package state

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/sqlerr"
)

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func openStore(t testing.TB, dir string, fs vfs.FS) *Store {
	t.Helper()
	s, err := Open(dir, Options{FS: fs, Logger: quietLogger, CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustGet(t testing.TB, tb *Table, key string) (string, bool) {
	t.Helper()
	v, ok, err := tb.Get([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func expectGet(t testing.TB, tb *Table, key, want string, wantOK bool) {
	t.Helper()
	v, ok := mustGet(t, tb, key)
	if ok != wantOK || v != want {
		t.Fatalf("table %d: Get(%q) = %q, %v; want %q, %v", tb.ID(), key, v, ok, want, wantOK)
	}
}

func snapGet(t testing.TB, sn *Snapshot, id TableID, key string) (string, bool) {
	t.Helper()
	v, ok, err := sn.Get(id, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

// scan returns "k=v" pairs of an iterator from First to the end.
func scan(t testing.TB, it *Iter) []string {
	t.Helper()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
	return out
}

func scanTable(t testing.TB, tb *Table, lower, upper []byte) []string {
	t.Helper()
	it, err := tb.NewIter(lower, upper)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	return scan(t, it)
}

func TestReadYourWritesThroughLayers(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	tb := s.Table(1)
	if s.Table(1) != tb {
		t.Fatal("Table returned a different handle for the same id")
	}
	other := s.Table(2)

	tb.Put([]byte("a"), []byte("1"))
	tb.Put([]byte("b"), []byte("1"))
	other.Put([]byte("a"), []byte("other"))
	expectGet(t, tb, "a", "1", true)
	tb.Seal(1)
	other.Seal(1)
	tb.Put([]byte("a"), []byte("2")) // shadows the sealed layer
	tb.Delete([]byte("b"))
	expectGet(t, tb, "a", "2", true)
	expectGet(t, tb, "b", "", false)
	tb.Seal(2)
	expectGet(t, tb, "a", "2", true)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	// Epoch 1 is in Pebble, epoch 2 still a layer above it.
	expectGet(t, tb, "a", "2", true)
	expectGet(t, tb, "b", "", false)
	expectGet(t, other, "a", "other", true)
	sn := s.Snapshot()
	if v, _ := snapGet(t, sn, 1, "a"); v != "1" || sn.Epoch() != 1 {
		t.Fatalf("snapshot at epoch %d reads a=%q", sn.Epoch(), v)
	}
	sn.Release()

	tb.Put([]byte("c"), []byte("3")) // current layer, uncommitted
	if _, err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	expectGet(t, tb, "a", "2", true)
	expectGet(t, tb, "b", "", false)
	expectGet(t, tb, "c", "3", true)
	if got := scanTable(t, tb, nil, nil); strings.Join(got, " ") != "a=2 c=3" {
		t.Fatalf("scan: %v", got)
	}
	sn = s.Snapshot()
	defer sn.Release()
	if _, ok := snapGet(t, sn, 1, "c"); ok {
		t.Fatal("snapshot sees an uncommitted write")
	}
	if _, ok := snapGet(t, sn, 1, "b"); ok {
		t.Fatal("snapshot sees a deleted key")
	}
}

func TestGetResultSurvivesWrites(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	tb := s.Table(1)
	tb.Put([]byte("k"), []byte("v1"))
	tb.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	fromPebble, _, _ := tb.Get([]byte("k"))
	tb.Put([]byte("k"), []byte("v2"))
	fromLayer, _, _ := tb.Get([]byte("k"))
	tb.Put([]byte("k"), []byte("v3"))
	tb.Clear()
	if string(fromPebble) != "v1" || string(fromLayer) != "v2" {
		t.Fatalf("values changed under the caller: %q %q", fromPebble, fromLayer)
	}
}

// TestCommitRestart closes and reopens a store: committed epochs are there,
// sealed-but-uncommitted and current writes are not.
func TestCommitRestart(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("disk=%v", disk), func(t *testing.T) {
			var fs vfs.FS = vfs.NewMem()
			dir := "db"
			if disk {
				fs, dir = nil, t.TempDir()
			}
			s := openStore(t, dir, fs)
			if s.CommittedEpoch() != 0 {
				t.Fatalf("new store at epoch %d", s.CommittedEpoch())
			}
			a, b := s.Table(1), s.Table(7)
			a.Put([]byte("x"), []byte("1"))
			b.Put([]byte("y"), []byte("1"))
			a.Seal(1)
			b.Seal(1)
			if _, err := s.Commit(1); err != nil {
				t.Fatal(err)
			}
			a.Put([]byte("x"), []byte("2"))
			a.Clear()
			a.Put([]byte("z"), []byte("2"))
			a.Seal(2)
			b.Seal(2)
			if _, err := s.Commit(2); err != nil {
				t.Fatal(err)
			}
			a.Put([]byte("sealed"), []byte("3"))
			a.Seal(3) // never committed
			a.Put([]byte("current"), []byte("4"))
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}

			s = openStore(t, dir, fs)
			defer s.Close()
			if s.CommittedEpoch() != 2 {
				t.Fatalf("reopened at epoch %d, want 2", s.CommittedEpoch())
			}
			a, b = s.Table(1), s.Table(7)
			expectGet(t, a, "x", "", false)
			expectGet(t, a, "z", "2", true)
			expectGet(t, a, "sealed", "", false)
			expectGet(t, a, "current", "", false)
			expectGet(t, b, "y", "1", true)
			sn := s.Snapshot()
			defer sn.Release()
			if sn.Epoch() != 2 {
				t.Fatalf("snapshot epoch %d", sn.Epoch())
			}
			it, err := sn.NewIter(1, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			if got := scan(t, it); strings.Join(got, " ") != "z=2" {
				t.Fatalf("snapshot scan: %v", got)
			}
		})
	}
}

// TestSnapshotStable holds a snapshot while later epochs commit.
func TestSnapshotStable(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	tb := s.Table(3)
	for i := range 10 {
		tb.Put([]byte{byte('a' + i)}, []byte("e1"))
	}
	tb.Seal(1)
	s.Commit(1)
	old := s.Snapshot()
	for epoch := uint64(2); epoch <= 5; epoch++ {
		tb.Put([]byte("a"), []byte(fmt.Sprint("e", epoch)))
		tb.Delete([]byte("b"))
		tb.DeleteRange([]byte("e"), []byte("h"))
		tb.Seal(epoch)
		if _, err := s.Commit(epoch); err != nil {
			t.Fatal(err)
		}
	}
	if old.Epoch() != 1 {
		t.Fatalf("old snapshot epoch %d", old.Epoch())
	}
	it, err := old.NewIter(3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := scan(t, it); len(got) != 10 || got[0] != "a=e1" || got[1] != "b=e1" {
		t.Fatalf("old snapshot changed: %v", got)
	}
	it.Close()
	old.Release()
	cur := s.Snapshot()
	defer cur.Release()
	if v, _ := snapGet(t, cur, 3, "a"); v != "e5" || cur.Epoch() != 5 {
		t.Fatalf("current snapshot at %d reads a=%q", cur.Epoch(), v)
	}
	it, _ = cur.NewIter(3, nil, nil)
	defer it.Close()
	if got := scan(t, it); strings.Join(got, " ") != "a=e5 c=e1 d=e1 h=e1 i=e1 j=e1" {
		t.Fatalf("current snapshot: %v", got)
	}
}

func TestCommitIsIncremental(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	tb := s.Table(1)
	for i := range 1000 {
		tb.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), []byte("v"))
	}
	tb.Seal(1)
	st, err := s.Commit(1)
	if err != nil || st.Keys != 1000 {
		t.Fatalf("first commit: %+v %v", st, err)
	}
	// Rewriting one key many times is one key in the next commit.
	for i := range 50 {
		tb.Put([]byte{0, 0, 0, 5}, []byte(fmt.Sprint(i)))
	}
	tb.Seal(2)
	st, err = s.Commit(2)
	if err != nil || st.Keys != 1 || st.Bytes > 100 {
		t.Fatalf("second commit: %+v %v", st, err)
	}
	// Nothing changed: only the marker.
	st, err = s.Commit(3)
	if err != nil || st.Keys != 0 {
		t.Fatalf("empty commit: %+v %v", st, err)
	}
}

func TestReleaseTable(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	tb := s.Table(1)
	tb.Put([]byte("committed"), []byte("1"))
	tb.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	tb.Put([]byte("sealed"), []byte("2"))
	tb.Seal(2)
	tb.Put([]byte("current"), []byte("3"))
	if n := tb.UncommittedBytes(); n != int64(len("sealed2current3")) {
		t.Fatalf("UncommittedBytes %d", n)
	}
	s.ReleaseTable(1)
	if st, err := s.Commit(2); err != nil || st.Keys != 0 {
		t.Fatalf("commit after release: %+v %v", st, err)
	}
	nt := s.Table(1)
	if nt == tb {
		t.Fatal("Table returned the released handle")
	}
	if got := scanTable(t, nt, nil, nil); strings.Join(got, " ") != "committed=1" {
		t.Fatalf("after release: %v", got)
	}
}

func TestCommitEpochOrder(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	if _, err := s.Commit(2); err != nil {
		t.Fatal(err)
	}
	for _, e := range []uint64{1, 2} {
		if _, err := s.Commit(e); err == nil {
			t.Fatalf("Commit(%d) after Commit(2) succeeded", e)
		}
	}
	tb := s.Table(1)
	tb.Seal(5)
	defer func() {
		if recover() == nil {
			t.Fatal("Seal with a smaller epoch did not panic")
		}
	}()
	tb.Seal(4)
}

// TestCommitLeavesLaterEpochs commits epoch n while epoch n+1 is sealed.
func TestCommitLeavesLaterEpochs(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, "db", fs)
	tb := s.Table(1)
	tb.Put([]byte("k"), []byte("1"))
	tb.Seal(1)
	tb.Put([]byte("k"), []byte("2"))
	tb.Seal(2)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	expectGet(t, tb, "k", "2", true)
	sn := s.Snapshot()
	if v, _ := snapGet(t, sn, 1, "k"); v != "1" {
		t.Fatalf("snapshot reads %q", v)
	}
	sn.Release()
	s.Close()
	s = openStore(t, "db", fs)
	defer s.Close()
	expectGet(t, s.Table(1), "k", "1", true)
}

func TestSecondOpenFails(t *testing.T) {
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("second Open succeeded")
		}
		if !strings.Contains(err.Error(), "is in use by another streamsql server") ||
			sqlerr.Code(err) != sqlerr.ObjectInUse {
			t.Fatalf("unclear error: %v (%s)", err, sqlerr.Code(err))
		}
	}
	t.Run("mem", func(t *testing.T) {
		fs := vfs.NewMem()
		s := openStore(t, "db", fs)
		_, err := Open("db", Options{FS: fs, Logger: quietLogger})
		check(t, err)
		s.Close()
		openStore(t, "db", fs).Close() // released on Close
	})
	t.Run("disk", func(t *testing.T) {
		dir := t.TempDir()
		s := openStore(t, dir, nil)
		_, err := Open(dir, Options{Logger: quietLogger})
		check(t, err)

		// Another process: run this test binary as the second server.
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSecondOpen$")
		cmd.Env = append(os.Environ(), "STATE_TEST_OPEN_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper process: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "is in use by another streamsql server") {
			t.Fatalf("helper process opened the store or failed unclearly:\n%s", out)
		}
		s.Close()
		openStore(t, dir, nil).Close()
	})
}

// TestHelperSecondOpen is run by TestSecondOpenFails in a child process.
func TestHelperSecondOpen(t *testing.T) {
	dir := os.Getenv("STATE_TEST_OPEN_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := Open(dir, Options{Logger: quietLogger})
	if err == nil {
		s.Close()
		fmt.Println("opened")
		return
	}
	fmt.Println(err)
}

func TestOpenRefusesOtherFormats(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, "db", fs)
	s.Close()
	// Rewrite the format version with raw Pebble.
	db, err := pebble.Open("db", &pebble.Options{FS: fs, Logger: pebbleLogger{quietLogger}})
	if err != nil {
		t.Fatal(err)
	}
	db.Set(sysFormatKey, binary.AppendUvarint(nil, 99), pebble.Sync)
	db.Close()
	_, err = Open("db", Options{FS: fs, Logger: quietLogger})
	if err == nil || !strings.Contains(err.Error(), "format version 99") {
		t.Fatalf("Open of a version 99 store: %v", err)
	}

	// A Pebble database that is not a streamsql store.
	db, err = pebble.Open("foreign", &pebble.Options{FS: fs, Logger: pebbleLogger{quietLogger}})
	if err != nil {
		t.Fatal(err)
	}
	db.Set([]byte("hello"), []byte("world"), pebble.Sync)
	db.Close()
	_, err = Open("foreign", Options{FS: fs, Logger: quietLogger})
	if err == nil || !strings.Contains(err.Error(), "not a streamsql store") {
		t.Fatalf("Open of a foreign database: %v", err)
	}
}

func TestCloseReportsLeaks(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	it, err := s.Table(1).NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = it
	sn := s.Snapshot()
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), "1 iterators left open") ||
		!strings.Contains(err.Error(), "1 snapshots left unreleased") {
		t.Fatalf("Close: %v", err)
	}
	sn.Release() // after Close: must not crash
}

// TestConcurrentTransfers runs an owner moving amounts between accounts (the
// total never changes within an epoch), a coordinator committing each sealed
// epoch, and readers summing snapshots: every snapshot must see the total.
func TestConcurrentTransfers(t *testing.T) {
	s := openStore(t, MemoryDir, nil)
	defer s.Close()
	r := newRand(t)
	const accounts, total, epochs = 50, 50 * 100, 60
	tb := s.Table(9)
	key := func(i int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(i)) }
	val := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	for i := range accounts {
		tb.Put(key(i), val(total/accounts))
	}
	tb.Seal(1)
	if _, err := s.Commit(1); err != nil {
		t.Fatal(err)
	}

	sealed := make(chan uint64, epochs)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	done := make(chan struct{})

	wg.Add(1)
	go func() { // coordinator
		defer wg.Done()
		for e := range sealed {
			if _, err := s.Commit(e); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 2 {
		wg.Add(1)
		go func() { // reader
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				sn := s.Snapshot()
				it, err := sn.NewIter(9, nil, nil)
				if err != nil {
					errs <- err
					sn.Release()
					return
				}
				var sum int64
				n := 0
				for ok := it.First(); ok; ok = it.Next() {
					sum += int64(binary.BigEndian.Uint64(it.Value()))
					n++
				}
				it.Close()
				epoch := sn.Epoch()
				sn.Release()
				if sum != total || n != accounts {
					errs <- fmt.Errorf("snapshot at epoch %d: %d accounts, total %d", epoch, n, sum)
					return
				}
			}
		}()
	}

	// The owner.
	model := make([]int64, accounts)
	for i := range model {
		model[i] = total / accounts
	}
	for e := uint64(2); e < epochs; e++ {
		for range 20 {
			from, to := r.IntN(accounts), r.IntN(accounts)
			amt := r.Int64N(10)
			model[from] -= amt
			model[to] += amt
			tb.Put(key(from), val(model[from]))
			tb.Put(key(to), val(model[to]))
		}
		for i := range accounts {
			v, ok, err := tb.Get(key(i))
			if err != nil || !ok || int64(binary.BigEndian.Uint64(v)) != model[i] {
				t.Errorf("epoch %d: account %d reads %x %v %v, want %d", e, i, v, ok, err, model[i])
			}
		}
		tb.Seal(e)
		sealed <- e
	}
	close(sealed)
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s.CommittedEpoch() != epochs-1 {
		t.Fatalf("committed epoch %d", s.CommittedEpoch())
	}
	got := scanTable(t, tb, nil, nil)
	if len(got) != accounts {
		t.Fatalf("%d accounts", len(got))
	}
}

// TestLayerBatchSizeBoundsBatch checks that the size Commit gives its batch
// up front is at least what writeLayer writes, for points, overwrites,
// deletions and range deletions (bounded and unbounded), so that the batch
// never grows.
func TestLayerBatchSizeBoundsBatch(t *testing.T) {
	s := openStore(t, "db", vfs.NewMem())
	defer s.Close()
	tb := s.Table(7)
	tb.DeleteRange([]byte("a"), []byte("c"))
	tb.DeleteRange([]byte("x"), nil)
	for i := range 300 {
		k := []byte(fmt.Sprintf("k%05d", i))
		tb.Put(k, make([]byte, i%200))
		if i%3 == 0 {
			tb.Put(k, []byte("overwritten"))
		}
		if i%7 == 0 {
			tb.Delete(k)
		}
	}
	tb.Seal(1)
	ls := tb.takeCommittable(1)
	if len(ls) != 1 {
		t.Fatalf("%d layers, want 1", len(ls))
	}
	b := s.db.NewBatch()
	defer b.Close()
	var kbuf []byte
	writeLayer(b, tb.prefix, ls[0], &kbuf)
	if got, bound := b.Len(), batchHeaderLen+layerBatchSize(len(tb.prefix), ls[0]); got > bound {
		t.Fatalf("batch of %d bytes, size bound %d", got, bound)
	}
}
