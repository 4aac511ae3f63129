package state

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/sqlerr"
)

// Key layout in Pebble (see the package documentation).
const (
	sysPrefix   byte = 0x01
	tablePrefix byte = 0x02
)

var (
	// sysFormatKey holds the store format version as a uvarint.
	sysFormatKey = []byte{sysPrefix, 'f', 'o', 'r', 'm', 'a', 't'}
	// sysEpochKey holds the committed epoch as 8 bytes big-endian.
	sysEpochKey = []byte{sysPrefix, 'e', 'p', 'o', 'c', 'h'}
)

// FormatVersion is the version of the store's key layout and encodings. Open
// refuses a store written with another version. Version 2: unconstrained
// numeric values carry their display scale (keys ignore trailing zeros,
// rows and aggregate states keep the scale). Version 3: operator state is
// keyed by virtual node first (see VNodePrefixLen). Version 4: so is the
// state of TopN per group, OVER windows, session windows and ASOF joins.
// Version 5: a min and a max over the same values share one value set.
const FormatVersion = 5

// MemoryDir is the directory name that makes Open use an in-memory filesystem.
const MemoryDir = ":memory:"

// Options configure a Store. The zero value is usable.
type Options struct {
	// Logger receives Pebble's messages (informational ones at Debug level).
	// Nil means slog.Default().
	Logger *slog.Logger
	// CacheSize is the size of Pebble's block cache (default 64 MiB).
	CacheSize int64
	// FS overrides the filesystem (tests: vfs.NewMem or a crashable or
	// error-injecting FS). Nil means the OS filesystem, or a new in-memory
	// filesystem for the directory ":memory:".
	FS vfs.FS
}

// Store is the Pebble database holding every state table, the committed-epoch
// marker and the committed read snapshot.
//
// Goroutine safety: Table, CommittedEpoch and Snapshot may be called from any
// goroutine. Commit is called by one goroutine at a time (the checkpoint
// coordinator). Close must be called once, after every Iter is closed and
// every Snapshot released, with no other call in progress.
type Store struct {
	db     *pebble.DB
	lock   *pebble.Lock
	dir    string
	logger *slog.Logger
	// onDisk is set when the store is on the operating system's filesystem
	// (savepoints are written there).
	onDisk bool

	mu     sync.Mutex
	tables map[TableID]*Table
	// shards are the extra handles of tables written by several actors
	// (TableShard), by table.
	shards map[TableID][]*Table
	snap   *Snapshot // the last committed epoch's snapshot; holds one reference
	closed bool

	commitMu  sync.Mutex // serializes Commit
	failed    error      // set when a commit failed fatally; guarded by commitMu
	committed atomic.Uint64

	dbClosed  atomic.Bool  // set by Close; late Snapshot releases skip Pebble
	openIters atomic.Int64 // Iters not yet closed
	userSnaps atomic.Int64 // Snapshot references not yet released
}

// Open opens the store in dir, creating it if it does not exist. The directory
// ":memory:" uses a new in-memory filesystem (or opts.FS if set). Only one
// Store may have a directory open at a time, across processes: a second Open
// fails with an ObjectInUse error saying the directory is in use by another
// streamsql server. Open fails on a directory written with another
// FormatVersion or holding a Pebble database that is not a streamsql store.
func Open(dir string, opts Options) (*Store, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	fsys := opts.FS
	if dir == MemoryDir {
		if fsys == nil {
			fsys = vfs.NewMem()
		}
		dir = "streamsql-mem"
	}
	if fsys == nil {
		fsys = vfs.Default
	}
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, ioError("create data directory", err)
	}
	lock, err := pebble.LockDirectory(dir, fsys)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, ioError("lock data directory", err)
		}
		return nil, &sqlerr.Error{
			Code:    sqlerr.ObjectInUse,
			Message: fmt.Sprintf("data directory %q is in use by another streamsql server", dir),
			Detail:  err.Error(),
			Hint:    "Stop the other server or start this one with a different data directory.",
		}
	}
	cacheSize := opts.CacheSize
	if cacheSize <= 0 {
		cacheSize = 64 << 20
	}
	cache := pebble.NewCache(cacheSize)
	defer cache.Unref()
	popts := &pebble.Options{
		FS:     fsys,
		Lock:   lock,
		Cache:  cache,
		Logger: pebbleLogger{logger},
		// Pinned rather than FormatNewest so that upgrading Pebble never
		// ratchets an existing store's format by accident.
		FormatMajorVersion: pebble.FormatValueSeparation,
		// Pebble charges memtables to the block cache: keep them at an
		// eighth of it so that blocks still fit.
		MemTableSize: uint64(min(max(cacheSize/8, 4<<20), 256<<20)),
	}
	// Operators look up keys that often do not exist (a new group, a join key
	// without a match): bloom filters keep those lookups off the disk.
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	db, err := pebble.Open(dir, popts)
	if err != nil {
		_ = lock.Close()
		return nil, ioError("open", err)
	}
	s := &Store{db: db, lock: lock, dir: dir, logger: logger, tables: map[TableID]*Table{}, shards: map[TableID][]*Table{}, onDisk: fsys == vfs.Default}
	epoch, err := s.init()
	if err != nil {
		_ = db.Close()
		_ = lock.Close()
		return nil, err
	}
	s.committed.Store(epoch)
	s.snap = newSnapshot(s, epoch)
	return s, nil
}

// init checks the format version, writing it to a new store, and returns the
// committed epoch.
func (s *Store) init() (uint64, error) {
	v, err := s.getSys(sysFormatKey)
	if err != nil {
		return 0, err
	}
	if v == nil {
		// A new store must be empty: refuse a foreign Pebble database.
		it, err := s.db.NewIter(nil)
		if err != nil {
			return 0, ioError("open", err)
		}
		nonEmpty := it.First()
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return 0, ioError("open", err)
		}
		if nonEmpty {
			return 0, sqlerr.New(sqlerr.IOError,
				"data directory %q holds a database that is not a streamsql store", s.dir)
		}
		b := s.db.NewBatch()
		defer b.Close()
		_ = b.Set(sysFormatKey, binary.AppendUvarint(nil, FormatVersion), nil)
		_ = b.Set(sysEpochKey, binary.BigEndian.AppendUint64(nil, 0), nil)
		if err := b.Commit(pebble.Sync); err != nil {
			return 0, ioError("initialize", err)
		}
		return 0, nil
	}
	version, n := binary.Uvarint(v)
	if n != len(v) {
		return 0, sqlerr.New(sqlerr.IOError, "data directory %q has a corrupt format version", s.dir)
	}
	if version != FormatVersion {
		return 0, &sqlerr.Error{
			Code: sqlerr.FeatureNotSupported,
			Message: fmt.Sprintf("data directory %q has store format version %d; this streamsql reads version %d",
				s.dir, version, FormatVersion),
			Hint: "Open it with the streamsql release that wrote it.",
		}
	}
	e, err := s.getSys(sysEpochKey)
	if err != nil {
		return 0, err
	}
	if len(e) != 8 {
		return 0, sqlerr.New(sqlerr.IOError, "data directory %q has a missing or corrupt committed epoch", s.dir)
	}
	return binary.BigEndian.Uint64(e), nil
}

// getSys reads a system key; a missing key returns nil.
func (s *Store) getSys(key []byte) ([]byte, error) {
	v, closer, err := s.db.Get(key)
	if err == pebble.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, ioError("read", err)
	}
	out := append([]byte{}, v...)
	return out, closer.Close()
}

// Close closes the store. Writes that were not committed are lost. Close
// reports Iters left open and Snapshots left unreleased as an error (after
// closing the store anyway).
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return sqlerr.New(sqlerr.InternalError, "state: store closed twice")
	}
	s.closed = true
	snap := s.snap
	s.snap = nil
	s.mu.Unlock()

	var errs []error
	if n := s.openIters.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d iterators left open", n))
	}
	if n := s.userSnaps.Load(); n > 0 {
		errs = append(errs, fmt.Errorf("%d snapshots left unreleased", n))
	}
	snap.release()
	s.dbClosed.Store(true)
	if err := s.db.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := s.lock.Close(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return sqlerr.New(sqlerr.InternalError, "state: close: %v", err)
	}
	return nil
}

// CommittedEpoch returns the last epoch whose Commit completed (0 for a new
// store). A Snapshot taken after CommittedEpoch returns n reads epoch n or later.
func (s *Store) CommittedEpoch() uint64 { return s.committed.Load() }

// Failed returns the error that made the store refuse commits (a failed WAL
// write or sync, such as a full disk), or nil. It is permanent: the process
// must reopen the store, which recovers the last committed epoch.
func (s *Store) Failed() error {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	return s.failed
}

// Table returns the handle of table id, creating it on first use. Calling
// Table twice with the same id returns the same handle. A new handle reads the
// table's committed data.
func (s *Store) Table(id TableID) *Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[id]
	if !ok {
		t = newTable(s, id)
		s.tables[id] = t
	}
	return t
}

// UncommittedBytes returns the approximate key and value bytes written to
// the store's tables and not committed yet: the memory the state layers hold
// beyond Pebble, which grows while commits fall behind the writes. Any
// goroutine may call it; it costs a load per table handle.
func (s *Store) UncommittedBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, t := range s.tables {
		n += t.pending.Load()
	}
	for _, hs := range s.shards {
		for _, t := range hs {
			n += t.pending.Load()
		}
	}
	return n
}

// ReleaseTable forgets the handle of table id, for tables used once (the
// scratch tables of a batch query). Its uncommitted writes, current and
// sealed, are dropped and never committed; its committed data stays in Pebble
// (Clear, Seal and Commit first to remove it). A later Table(id) returns a new
// handle reading the committed data. The old handle must not be used again.
func (s *Store) ReleaseTable(id TableID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tables, id)
	delete(s.shards, id)
}

// TableShard returns handle shard of table id, creating it on first use;
// shard 0 is Table(id). Each handle has its own owner and its own current
// and sealed layers, and all are committed together, so the actors of a
// parallel fragment each write one handle of the same table. Their writes
// must not overlap: each writes and reads only the keys of the virtual
// nodes it owns (see VNode), which the committed data of the others does not
// contain. Handles reading keys written by another shard see only that
// shard's committed data.
func (s *Store) TableShard(id TableID, shard int) *Table {
	if shard == 0 {
		return s.Table(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.shards[id]
	for len(hs) < shard {
		hs = append(hs, newTable(s, id))
	}
	s.shards[id] = hs
	return hs[shard-1]
}

// CommitStats describe one Commit.
type CommitStats struct {
	// Keys is the number of point writes and range deletions written.
	Keys int
	// Bytes is the size of the Pebble batch.
	Bytes int64
	// Duration is the wall time of the Commit, including the sync.
	Duration time.Duration
	// Flush is the part of Duration spent building the batch from the
	// sealed layers, Sync the part spent in Pebble's commit of it (the WAL
	// write and fsync).
	Flush, Sync time.Duration
	// StateSize is the store's size on disk after the commit (every table,
	// live sstables and WAL), in bytes.
	StateSize int64
}

// Commit atomically and durably (pebble.Sync) writes every sealed layer of
// every table with epoch <= epoch, plus the committed-epoch marker, as one
// Pebble batch; then it drops the committed layers and publishes a new read
// Snapshot at epoch. Its cost follows the number of keys written since the
// last Commit, not the size of the state.
//
// Commit is called by one goroutine (the coordinator) with increasing epochs;
// an epoch not above CommittedEpoch is an error. Writes sealed after Commit
// starts are not guaranteed to be included even if their epoch is <= epoch:
// the caller commits epoch n only after every table sealed it.
//
// If Commit fails, nothing of the epoch becomes visible to Snapshots and
// CommittedEpoch does not move; the sealed layers stay, so table reads are
// unaffected. After a restart the store holds either all of the epoch (a sync
// that reported failure may still have written the batch) or none of it:
// Pebble batches are atomic in the WAL. Pebble treats a failed WAL write or
// sync as fatal, so after such a failure the store refuses every later Commit
// with the same error; the process must reopen the store to recover. Other
// failures (a closed store, a bad epoch) leave the store usable.
func (s *Store) Commit(epoch uint64) (CommitStats, error) {
	start := time.Now()
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if s.failed != nil {
		return CommitStats{}, s.failed
	}
	if c := s.committed.Load(); epoch <= c {
		return CommitStats{}, sqlerr.New(sqlerr.InternalError,
			"state: commit of epoch %d after epoch %d", epoch, c)
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return CommitStats{}, sqlerr.New(sqlerr.InternalError, "state: commit on a closed store")
	}
	tables := make([]*Table, 0, len(s.tables))
	for _, t := range s.tables {
		tables = append(tables, t)
	}
	for _, hs := range s.shards {
		tables = append(tables, hs...)
	}
	s.mu.Unlock()
	sort.Slice(tables, func(i, j int) bool { return tables[i].id < tables[j].id })

	var stats CommitStats
	taken := make([]int, len(tables))
	var kbuf []byte
	// Layers go into the batch in epoch order per table, across the shard
	// handles of a table too, so that a later epoch's range deletion on one
	// handle covers an earlier epoch's writes on another.
	type tableLayer struct {
		t *Table
		l *layer
	}
	var layers []tableLayer
	size := batchHeaderLen + batchRecordMax(len(sysEpochKey), 8)
	for ti, t := range tables {
		ls := t.takeCommittable(epoch)
		taken[ti] = len(ls)
		for _, l := range ls {
			layers = append(layers, tableLayer{t, l})
			size += layerBatchSize(len(t.prefix), l)
		}
	}
	// Sized up front: an epoch's batch is often tens of megabytes, and
	// growing it by doubling copies it several times over.
	b := s.db.NewBatchWithSize(size)
	defer b.Close()
	sort.SliceStable(layers, func(i, j int) bool {
		a, b := layers[i], layers[j]
		return a.t.id < b.t.id || (a.t.id == b.t.id && a.l.epoch < b.l.epoch)
	})
	for _, tl := range layers {
		stats.Keys += writeLayer(b, tl.t.prefix, tl.l, &kbuf)
	}
	_ = b.Set(sysEpochKey, binary.BigEndian.AppendUint64(nil, epoch), nil)
	stats.Bytes = int64(b.Len())
	synced := time.Now()
	stats.Flush = synced.Sub(start)
	err := s.commitBatch(b, epoch)
	stats.Sync = time.Since(synced)
	if err != nil {
		stats.Duration = time.Since(start)
		return stats, err
	}
	for ti, t := range tables {
		t.dropCommitted(taken[ti])
	}
	next := newSnapshot(s, epoch)
	s.mu.Lock()
	old := s.snap
	s.snap = next
	s.mu.Unlock()
	old.release()
	s.committed.Store(epoch)
	stats.Duration = time.Since(start)
	stats.StateSize = int64(s.db.Metrics().DiskSpaceUsage())
	return stats, nil
}

// commitBatch commits b with a sync. Pebble treats a failed WAL write or sync
// as fatal (its commit pipeline cannot go on) and reports it through
// Logger.Fatalf, which panics with a pebbleFatal; commitBatch turns that into
// an error and marks the store failed.
func (s *Store) commitBatch(b *pebble.Batch, epoch uint64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(pebbleFatal)
			if !ok {
				panic(r)
			}
			code := sqlerr.IOError
			if strings.Contains(f.msg, "no space left on device") {
				code = sqlerr.DiskFull
			}
			s.failed = &sqlerr.Error{
				Code: code,
				Message: fmt.Sprintf("state: commit of epoch %d failed: %s; the store accepts no more commits",
					epoch, f.msg),
				Hint: fmt.Sprintf("Restart the server to recover from committed epoch %d.", s.committed.Load()),
			}
			err = s.failed
		}
	}()
	if err := b.Commit(pebble.Sync); err != nil {
		return ioError(fmt.Sprintf("commit of epoch %d", epoch), err)
	}
	return nil
}

// Sizes of Pebble's batch encoding: a 12-byte header, then per record a kind
// byte and the key and value, each preceded by its uvarint length.
const batchHeaderLen = 12

// batchRecordMax returns the largest encoded size of a record with a key and
// a value of the given lengths.
func batchRecordMax(klen, vlen int) int {
	return 1 + 2*binary.MaxVarintLen32 + klen + vlen
}

// layerBatchSize returns an upper bound of the bytes writeLayer adds to a
// batch for l, whose keys are written under a prefix of prefixLen bytes.
func layerBatchSize(prefixLen int, l *layer) int {
	n := int(l.bytes) + l.points.Len()*batchRecordMax(prefixLen, 0)
	return n + len(l.dels)*batchRecordMax(2*prefixLen, 0)
}

// writeLayer adds the writes of l to b: first its range deletions, then its
// points (which are newer). It returns the number of operations added.
func writeLayer(b *pebble.Batch, prefix []byte, l *layer, kbuf *[]byte) int {
	n := 0
	for _, d := range l.dels {
		lo := append(append((*kbuf)[:0], prefix...), d.start...)
		hi := PrefixEnd(prefix)
		if d.end != nil {
			hi = append(append([]byte(nil), prefix...), d.end...)
		}
		_ = b.DeleteRange(lo, hi, nil)
		*kbuf = lo
		n++
	}
	l.points.Scan(func(e entry) bool {
		var op *pebble.DeferredBatchOp
		if e.del {
			op = b.DeleteDeferred(len(prefix) + len(e.key()))
		} else {
			op = b.SetDeferred(len(prefix)+int(e.klen), len(e.kv)-int(e.klen))
			copy(op.Value, e.value())
		}
		copy(op.Key, prefix)
		copy(op.Key[len(prefix):], e.key())
		_ = op.Finish()
		n++
		return true
	})
	return n
}

// Snapshot returns the read view of the last committed epoch, the same epoch
// for every table. The caller must Release it. Snapshots are safe for
// concurrent use; each Iter they return belongs to one goroutine.
func (s *Store) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		panic("state: Snapshot on a closed store")
	}
	s.snap.refs.Add(1)
	s.userSnaps.Add(1)
	return s.snap
}

// Snapshot is a consistent, read-only view of the store at a committed epoch.
// It is reference counted: every Store.Snapshot call must be matched by one
// Release. It keeps Pebble from discarding the data it sees, so hold it only
// as long as a query runs.
type Snapshot struct {
	store *Store
	snap  *pebble.Snapshot
	epoch uint64
	refs  atomic.Int32 // the store's reference while current, plus users'
}

func newSnapshot(s *Store, epoch uint64) *Snapshot {
	sn := &Snapshot{store: s, snap: s.db.NewSnapshot(), epoch: epoch}
	sn.refs.Store(1)
	return sn
}

// Epoch returns the committed epoch the snapshot reads.
func (sn *Snapshot) Epoch() uint64 { return sn.epoch }

// Get returns the committed value of key in table id. The returned slice is a
// copy owned by the caller.
func (sn *Snapshot) Get(id TableID, key []byte) ([]byte, bool, error) {
	var kbuf [64]byte
	k := append(append(kbuf[:0], tablePrefix, 0, 0, 0, 0), key...)
	binary.BigEndian.PutUint32(k[1:], uint32(id))
	v, closer, err := sn.snap.Get(k)
	if err == pebble.ErrNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, ioError("read", err)
	}
	out := append([]byte{}, v...)
	if err := closer.Close(); err != nil {
		return nil, false, ioError("read", err)
	}
	return out, true, nil
}

// NewIter returns an iterator over the committed keys of table id in
// [lower, upper) (nil bounds are unbounded). It must be closed before the
// snapshot is released.
func (sn *Snapshot) NewIter(id TableID, lower, upper []byte) (*Iter, error) {
	it := newIter(sn.store, tableKeyPrefix(id), lower, upper)
	pi, err := sn.snap.NewIterWithContext(context.Background(), it.pebbleBounds())
	if err != nil {
		_ = it.Close()
		return nil, ioError("read", err)
	}
	it.addPebble(pi)
	return it, nil
}

// Release drops the caller's reference. The snapshot must not be used after.
func (sn *Snapshot) Release() {
	sn.store.userSnaps.Add(-1)
	sn.release()
}

func (sn *Snapshot) release() {
	switch n := sn.refs.Add(-1); {
	case n == 0:
		if !sn.store.dbClosed.Load() {
			_ = sn.snap.Close()
		}
	case n < 0:
		panic("state: Snapshot released twice")
	}
}

// ioError wraps a storage error for SQL clients (SQLSTATE 58030).
func ioError(op string, err error) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.IOError, Message: fmt.Sprintf("state: %s: %v", op, err)}
}

// pebbleLogger forwards Pebble's log messages to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf panics with a pebbleFatal. Commit recovers the panics of its own
// Pebble commit; elsewhere (Pebble's background work) they end the process,
// as Pebble intends.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic(pebbleFatal{msg})
}

// pebbleFatal is the panic value of a fatal Pebble error.
type pebbleFatal struct{ msg string }

func (f pebbleFatal) Error() string { return "pebble: " + f.msg }
