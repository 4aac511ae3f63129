package state

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// crashFS wraps a crashable MemFS. While armed, it calls onOp before every
// write or sync of a WAL file, the operations a commit depends on.
type crashFS struct {
	mem *vfs.MemFS
	fs  *errorfs.FS

	mu    sync.Mutex
	armed bool
	onOp  func(op errorfs.Op) error
}

func newCrashFS() *crashFS {
	c := &crashFS{mem: vfs.NewCrashableMem()}
	c.fs = errorfs.Wrap(c.mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.armed || !strings.HasSuffix(op.Path, ".log") {
			return nil
		}
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync,
			errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFileFlush:
			return c.onOp(op)
		}
		return nil
	}))
	return c
}

func (c *crashFS) arm(onOp func(errorfs.Op) error) {
	c.mu.Lock()
	c.armed, c.onOp = true, onOp
	c.mu.Unlock()
}

func (c *crashFS) disarm() {
	c.mu.Lock()
	c.armed = false
	c.mu.Unlock()
}

var errInjected = errors.New("injected I/O error")

// crashFixture commits epoch 1 and seals epoch 2 (overwrites, deletions, a
// Clear) over two tables, and returns the expected contents after each.
type crashFixture struct {
	s              *Store
	epoch1, epoch2 [2]map[string]string
}

var crashTables = [2]TableID{4, 5}

func newCrashFixture(t *testing.T, fs vfs.FS) *crashFixture {
	f := &crashFixture{s: openStore(t, "db", fs)}
	a, b := f.s.Table(crashTables[0]), f.s.Table(crashTables[1])
	for i := range 2 {
		f.epoch1[i] = map[string]string{}
	}
	for i := range 200 {
		k, v := fmt.Sprintf("k%03d", i), fmt.Sprint("v1-", i)
		a.Put([]byte(k), []byte(v))
		b.Put([]byte(k), []byte(v))
		f.epoch1[0][k], f.epoch1[1][k] = v, v
	}
	a.Seal(1)
	b.Seal(1)
	if _, err := f.s.Commit(1); err != nil {
		t.Fatal(err)
	}
	f.epoch2[0], f.epoch2[1] = maps.Clone(f.epoch1[0]), map[string]string{}
	for i := 0; i < 200; i += 2 {
		k, v := fmt.Sprintf("k%03d", i), fmt.Sprint("v2-", i)
		a.Put([]byte(k), []byte(v))
		f.epoch2[0][k] = v
		k = fmt.Sprintf("k%03d", i+1)
		a.Delete([]byte(k))
		delete(f.epoch2[0], k)
	}
	b.Clear()
	b.Put([]byte("new"), []byte("v2"))
	f.epoch2[1]["new"] = "v2"
	a.Seal(2)
	b.Seal(2)
	return f
}

// contents reads both tables through a snapshot.
func contents(t *testing.T, s *Store) (uint64, [2]map[string]string) {
	t.Helper()
	sn := s.Snapshot()
	defer sn.Release()
	var out [2]map[string]string
	for i, id := range crashTables {
		out[i] = map[string]string{}
		it, err := sn.NewIter(id, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			out[i][string(it.Key())] = string(it.Value())
		}
		if err := it.Error(); err != nil {
			t.Fatal(err)
		}
		it.Close()
	}
	return sn.Epoch(), out
}

// checkRecovered opens a crash image and checks that it holds exactly epoch 1
// or exactly epoch 2 (allowed says which), never a mix.
func (f *crashFixture) checkRecovered(t *testing.T, fs vfs.FS, allowed ...uint64) uint64 {
	t.Helper()
	s := openStore(t, "db", fs)
	defer s.Close()
	epoch, got := contents(t, s)
	if s.CommittedEpoch() != epoch {
		t.Fatalf("CommittedEpoch %d, snapshot epoch %d", s.CommittedEpoch(), epoch)
	}
	var want [2]map[string]string
	switch epoch {
	case 1:
		want = f.epoch1
	case 2:
		want = f.epoch2
	default:
		t.Fatalf("recovered epoch %d", epoch)
	}
	for i := range want {
		if !maps.Equal(got[i], want[i]) {
			t.Fatalf("recovered epoch %d, table %d differs: %d keys, want %d", epoch, crashTables[i], len(got[i]), len(want[i]))
		}
	}
	for _, e := range allowed {
		if e == epoch {
			return epoch
		}
	}
	t.Fatalf("recovered epoch %d, allowed %v", epoch, allowed)
	return 0
}

// TestCommitFailureIsAtomic fails the WAL write of a commit: the commit
// reports the error, nothing of epoch 2 becomes visible to snapshots, the
// tables still read their writes, and a crash right after leaves epoch 1 or
// all of epoch 2.
func TestCommitFailureIsAtomic(t *testing.T) {
	r := newRand(t)
	for _, kind := range []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileSync} {
		name := map[errorfs.OpKind]string{errorfs.OpFileWrite: "write", errorfs.OpFileSync: "sync"}[kind]
		t.Run(name, func(t *testing.T) {
			c := newCrashFS()
			f := newCrashFixture(t, c.fs)
			var before *vfs.MemFS
			c.arm(func(op errorfs.Op) error {
				if op.Kind != kind && !(kind == errorfs.OpFileSync && op.Kind == errorfs.OpFileSyncData) {
					return nil
				}
				if before == nil {
					before = c.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: r.IntN(101), RNG: rand.New(rand.NewPCG(r.Uint64(), 0))})
				}
				return errInjected
			})
			if _, err := f.s.Commit(2); err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("Commit(2) with a failing WAL: %v", err)
			}
			c.disarm()
			if f.s.CommittedEpoch() != 1 {
				t.Fatalf("committed epoch %d after a failed commit", f.s.CommittedEpoch())
			}
			if epoch, got := contents(t, f.s); epoch != 1 || !maps.Equal(got[0], f.epoch1[0]) || !maps.Equal(got[1], f.epoch1[1]) {
				t.Fatalf("a snapshot after the failed commit reads epoch %d", epoch)
			}
			// The owner still reads its sealed writes.
			for i, id := range crashTables {
				got := map[string]string{}
				it, err := f.s.Table(id).NewIter(nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				for ok := it.First(); ok; ok = it.Next() {
					got[string(it.Key())] = string(it.Value())
				}
				it.Close()
				if !maps.Equal(got, f.epoch2[i]) {
					t.Fatalf("table %d after the failed commit: %d keys, want %d", id, len(got), len(f.epoch2[i]))
				}
			}
			after := c.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: r.IntN(101), RNG: rand.New(rand.NewPCG(r.Uint64(), 0))})
			// Pebble cannot commit after a WAL failure: the store says so
			// on every later Commit.
			if _, err := f.s.Commit(3); err == nil || !strings.Contains(err.Error(), "accepts no more commits") {
				t.Fatalf("Commit after a failed commit: %v", err)
			}
			_ = f.s.Close()
			if before == nil {
				t.Fatal("the commit wrote no WAL")
			}
			if kind == errorfs.OpFileWrite {
				f.checkRecovered(t, before, 1)
			} else {
				// Before the sync, the batch may be in the unsynced data kept.
				f.checkRecovered(t, before, 1, 2)
			}
			f.checkRecovered(t, after, 1, 2)
		})
	}
}

// TestCommitCrashPoints crashes (takes a crash image of the filesystem) before
// each WAL operation of a successful commit, keeping a random part of the
// unsynced data: every image recovers to exactly epoch 1 or epoch 2, and the
// image taken after Commit returns recovers to epoch 2.
func TestCommitCrashPoints(t *testing.T) {
	r := newRand(t)
	c := newCrashFS()
	f := newCrashFixture(t, c.fs)
	var images []*vfs.MemFS
	c.arm(func(errorfs.Op) error {
		images = append(images, c.mem.CrashClone(vfs.CrashCloneCfg{
			UnsyncedDataPercent: r.IntN(101), RNG: rand.New(rand.NewPCG(r.Uint64(), 0))}))
		return nil
	})
	if _, err := f.s.Commit(2); err != nil {
		t.Fatal(err)
	}
	c.disarm()
	final := c.mem.CrashClone(vfs.CrashCloneCfg{})
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(images) == 0 {
		t.Fatal("the commit wrote no WAL")
	}
	for i, img := range images {
		t.Logf("image %d: epoch %d", i, f.checkRecovered(t, img, 1, 2))
	}
	f.checkRecovered(t, final, 2)
}
