// Package engine is streamsql's database: it owns the state store, the
// catalog, the checkpoint coordinator and the running dataflows, and executes
// statements for sessions. It implements pgwire.Engine.
//
// Statement execution in brief: DDL changes the catalog and the running
// dataflows at an epoch boundary (a barrier mutation) and returns once the
// epoch holding the change is committed; DML writes a table's rows and
// change stream under the table's lock and returns once the epoch holding
// the write is committed (so it is durable and visible in every view);
// SELECT reads the last committed epoch, the same one for every relation.
package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/memlimit"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// Options configures an Engine.
type Options struct {
	// DataDir holds the state; ":memory:" keeps it in memory.
	DataDir string
	// BarrierInterval is the time between checkpoint barriers when no write
	// asks for one sooner (default 1s).
	BarrierInterval time.Duration
	Logger          *slog.Logger
	// Mem allocates Arrow memory (default memory.DefaultAllocator).
	Mem memory.Allocator
	// AtLeastOnce makes at_least_once the default checkpoint_mode of
	// sessions (views created in it do not align barriers).
	AtLeastOnce bool
	// CheckpointTimeout reports a checkpoint not completed in time as timed
	// out and lets the next barrier go (0: no timeout).
	CheckpointTimeout time.Duration
	// MaxInFlightCheckpoints is the number of checkpoints that may be under
	// way at once (default 1).
	MaxInFlightCheckpoints int
	// CacheSize bounds the state store's block cache (default an eighth of
	// MemoryLimit, or 64 MiB without one). State beyond it stays in Pebble's
	// files; operators read through the cache.
	CacheSize int64
	// MemoryLimit is the server's memory budget in bytes (default
	// DefaultMemoryLimit(); < 0: none). The defaults of CacheSize,
	// MaxUncommittedState and QueryMemoryLimit are shares of it, and the
	// operators' caches evict beyond theirs (see memory_budget.go).
	MemoryLimit int64
	// StreamingParallelism is the number of actors streaming_parallelism =
	// default gives the partitioned part of a new view or sink (default
	// runtime.GOMAXPROCS(0): one per core).
	StreamingParallelism int
	// CheckpointFrequency makes every n-th barrier of the interval a
	// checkpoint (default 1). The barriers between seal every operator's
	// changes in memory; they become durable and visible to queries with the
	// next checkpoint. Writes and FLUSH always ask for a checkpoint.
	CheckpointFrequency int
	// BackfillBudget bounds the time a new view's backfill reads its
	// upstreams at one barrier (default a quarter of BarrierInterval, within
	// [10ms, 50ms]); BackfillChunkRows the rows (default 65536).
	BackfillBudget    time.Duration
	BackfillChunkRows int
	// AggCacheGroups bounds the groups each streaming aggregation keeps in
	// memory (default exec.DefaultAggCacheGroups); the others are read from
	// the store when they change.
	AggCacheGroups int
	// QueryMemoryLimit is the default query_memory_limit of sessions, in
	// bytes (default DefaultQueryMemoryLimit(); < 0: no limit).
	QueryMemoryLimit int64
	// MaxUncommittedState bounds the bytes written to state and not yet
	// committed: beyond it, source readers wait for a checkpoint (default
	// DefaultMaxUncommittedState; < 0: no limit).
	MaxUncommittedState int64
	// FS overrides the state store's filesystem (tests inject faults).
	FS vfs.FS
	// Clock is the time barriers carry, which is now() in streaming plans
	// (temporal filters); default time.Now. Tests fix it.
	Clock func() time.Time
	// Auth is the authentication mode: AuthAuto (default), AuthSCRAM,
	// AuthMD5 or AuthTrust (see Authenticator).
	Auth string
	// Superuser names the bootstrap superuser (default DefaultSuperuser),
	// created at the first start; SuperuserPassword, if set, becomes its
	// password.
	Superuser         string
	SuperuserPassword string
	// CheckpointHistoryRetention is how long the persisted checkpoint
	// history (streamsql_checkpoints) keeps a checkpoint (default
	// DefaultCheckpointHistoryRetention).
	CheckpointHistoryRetention time.Duration
	// RetainHistory is the retention of the tables and materialized views
	// that do not set retain_history (0: DefaultRetainHistory; < 0: none).
	RetainHistory time.Duration
}

// Engine is a running streamsql database. It is safe for concurrent use.
type Engine struct {
	opts  Options
	log   *slog.Logger
	mem   memory.Allocator
	store *state.Store
	// scratch holds the temporary state of batch queries (aggregations); it
	// is never committed.
	scratch   *state.Store
	scratchID atomic.Uint32
	cat       *catalog.Catalog
	coord     *barrier.Coordinator
	// backpressure holds source readers back while commits fall behind.
	backpressure backpressure
	// budget is the memory budget (--memory-limit); opCaches its pool of
	// operator caches.
	budget   *memlimit.Budget
	opCaches *memlimit.Pool
	catSrc   *catalogSource
	cleanup  *cleanupSource
	// roles are the roles, grants and owners (see role.go).
	roles *catalog.Roles

	// ddlMu serialises DDL statements.
	ddlMu sync.Mutex

	// dbSessions counts the sessions connected to each database.
	dbSessionsMu sync.Mutex
	dbSessions   map[string]int

	mu     sync.Mutex
	tables map[uint32]*tableWriter
	views  map[uint32]*view
	// histories are the running logs of relations' retained history, by
	// relation id (see retain_history.go).
	histories map[uint32]*changelog
	// jobs are the backfills under way, by view id (see backfillJob).
	jobs map[uint32]*backfillJob

	// stats records per-checkpoint figures for streamsql_checkpoints.
	stats checkpointStats
	// history persists them; metrics are the Prometheus metrics; queries
	// are the statements running.
	history *historySource
	metrics *metrics
	queries runningQueries
	// locks are the row locks of transactions (rowlock.go).
	locks lockManager

	ctx     context.Context
	cancel  context.CancelFunc
	actors  sync.WaitGroup
	started time.Time
	closed  atomic.Bool
	// failed is closed when the state store failed (see fail); failure holds
	// the error.
	failed   chan struct{}
	failOnce sync.Once
	failure  error
}

var _ pgwire.Engine = (*Engine)(nil)

// Open opens (or creates) the database in opts.DataDir, rebuilds every
// dataflow from the last committed epoch and starts the checkpoint
// coordinator.
func Open(opts Options) (*Engine, error) {
	openStart := time.Now()
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Mem == nil {
		opts.Mem = memory.DefaultAllocator
	}
	if opts.BarrierInterval <= 0 {
		opts.BarrierInterval = time.Second
	}
	budget := divideMemory(&opts)
	switch {
	case opts.QueryMemoryLimit == 0:
		opts.QueryMemoryLimit = DefaultQueryMemoryLimit()
	case opts.QueryMemoryLimit < 0:
		opts.QueryMemoryLimit = 0
	}
	switch {
	case opts.MaxUncommittedState == 0:
		opts.MaxUncommittedState = DefaultMaxUncommittedState
	case opts.MaxUncommittedState < 0:
		opts.MaxUncommittedState = 0
	}
	if opts.DataDir == "" {
		opts.DataDir = ":memory:"
	}
	store, err := state.Open(opts.DataDir, state.Options{Logger: opts.Logger, CacheSize: opts.CacheSize, FS: opts.FS})
	if err != nil {
		return nil, err
	}
	scratch, err := state.Open(":memory:", state.Options{Logger: opts.Logger, CacheSize: 8 << 20})
	if err != nil {
		store.Close()
		return nil, err
	}
	e := &Engine{
		backpressure: backpressure{limit: opts.MaxUncommittedState},
		budget:       budget,
		opts:         opts,
		log:          opts.Logger,
		mem:          opts.Mem,
		store:        store,
		scratch:      scratch,
		cat:          catalog.New(),
		roles:        catalog.NewRoles(),
		dbSessions:   map[string]int{},
		tables:       map[uint32]*tableWriter{},
		views:        map[uint32]*view{},
		histories:    map[uint32]*changelog{},
		started:      time.Now(),
		failed:       make(chan struct{}),
	}
	e.reportMemory()
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.metrics = newMetrics(e)
	e.catSrc = &catalogSource{table: store.Table(catalogTable)}
	e.cleanup = &cleanupSource{}
	e.registerSystemTables()
	if err := e.loadCatalog(); err != nil {
		e.closeStores()
		return nil, err
	}
	committed := store.CommittedEpoch()
	e.coord = barrier.NewCoordinator(committed, barrier.Options{
		Interval:            opts.BarrierInterval,
		CheckpointFrequency: opts.CheckpointFrequency,
		Timeout:             opts.CheckpointTimeout,
		MaxInFlight:         opts.MaxInFlightCheckpoints,
		Commit:              e.commit,
		Clock:               opts.Clock,
		Logger:              opts.Logger,
	})
	e.coord.AddSource(e.catSrc)
	e.coord.AddSource(e.cleanup)
	e.history = newHistorySource(e)
	e.coord.AddSource(e.history)
	if err := e.restoreDataflows(); err != nil {
		e.cancel()
		e.actors.Wait()
		e.closeStores()
		return nil, err
	}
	e.coord.Start()
	if err := e.bootstrapSuperuser(); err != nil {
		e.Close()
		return nil, err
	}
	e.log.Info("database open", "data_dir", opts.DataDir, "committed_epoch", committed,
		"tables", len(e.tables), "views", len(e.views), "duration", time.Since(openStart))
	return e, nil
}

func (e *Engine) closeStores() {
	e.scratch.Close()
	e.store.Close()
}

func (e *Engine) commit(epoch uint64) error {
	stats, err := e.store.Commit(epoch)
	if err != nil {
		if failed := e.store.Failed(); failed != nil {
			e.fail(failed)
			return fatalError{failed}
		}
		return err
	}
	e.stats.committed(epoch, stats)
	e.log.Debug("checkpoint committed", "epoch", epoch, "keys", stats.Keys, "bytes", stats.Bytes, "duration", stats.Duration)
	return nil
}

// fatalError is a store failure: the coordinator stops (barrier.ErrFatal)
// and writers get the store's error, with its SQLSTATE.
type fatalError struct{ err error }

func (f fatalError) Error() string   { return f.err.Error() }
func (f fatalError) Unwrap() []error { return []error{f.err, barrier.ErrFatal} }

// fail records that the state store can commit nothing more (a failed WAL
// write or sync: a full disk, an I/O error). Every committed epoch is safe;
// what was written after it is not acknowledged (writers get err). The
// engine keeps answering queries from the last committed epoch; the owner
// of the engine should stop it (see Failed) and restart once the cause is
// fixed, which recovers the last committed epoch.
func (e *Engine) fail(err error) {
	e.failOnce.Do(func() {
		e.failure = err
		e.log.Error("state store failed: no more checkpoints can be committed; restart the server once the cause is fixed",
			"err", err, "committed_epoch", e.store.CommittedEpoch())
		close(e.failed)
	})
}

// Failed is closed when the state store has failed; Err then returns the
// error. A failed engine acknowledges no more writes.
func (e *Engine) Failed() <-chan struct{} { return e.failed }

// Err returns the state store's failure, or nil.
func (e *Engine) Err() error {
	select {
	case <-e.failed:
		return e.failure
	default:
		return nil
	}
}

// Close takes a final checkpoint, stops every dataflow and closes the store.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if e.Err() != nil {
		e.log.Warn("no final checkpoint: the state store failed")
	} else if err := e.Flush(ctx); err != nil {
		e.log.Warn("final checkpoint failed", "err", err)
	}
	e.coord.Stop()
	e.cancel()
	e.actors.Wait()
	e.mu.Lock()
	for _, v := range e.views {
		v.closeReaders()
	}
	e.mu.Unlock()
	e.log.Info("database closed", "committed_epoch", e.store.CommittedEpoch())
	e.scratch.Close()
	return e.store.Close()
}

// Flush waits until everything written before the call is committed and
// visible in every view.
func (e *Engine) Flush(ctx context.Context) error {
	return e.awaitCommit(ctx, e.coord.Checkpoint())
}

// awaitCommit asks for epoch to be committed now (as a checkpoint, whatever
// the checkpoint frequency) and waits until it is.
func (e *Engine) awaitCommit(ctx context.Context, epoch uint64) error {
	e.coord.Trigger(epoch)
	return e.coord.WaitCommitted(ctx, epoch)
}

// CommittedEpoch returns the last committed epoch.
func (e *Engine) CommittedEpoch() uint64 { return e.coord.Committed() }

// Connect opens a session.
func (e *Engine) Connect(ctx context.Context, params map[string]string) (pgwire.Session, error) {
	if e.cat.Database(params["database"]) == nil {
		return nil, sqlerr.New(sqlerr.InvalidCatalogName, "database \"%s\" does not exist", params["database"])
	}
	if err := e.checkLogin(params["user"]); err != nil {
		return nil, err
	}
	s, err := newSession(e, params)
	if err != nil {
		return nil, err
	}
	if b, ok := pgwire.BackendOf(ctx); ok {
		s.backend, s.hasBackend, s.pid = b, true, int32(b.PID())
	}
	e.sessionOpened(params["database"])
	e.queries.opened(s)
	return s, nil
}

// catalogTable is the state table of the catalog.
const catalogTable state.TableID = 0

// Catalog keys: relPrefix + big-endian relation id -> JSON relation;
// nextIDKey -> the next free id for relations and state tables.
var (
	relPrefix = []byte("r")
	nextIDKey = []byte("n")
)

func relKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), relPrefix...), id)
}

// catalogSource owns the catalog state table: DDL writes it under mu and the
// coordinator seals it at every barrier.
type catalogSource struct {
	mu     sync.Mutex
	table  *state.Table
	nextID uint32
}

func (c *catalogSource) Inject(_ context.Context, b *barrier.Barrier) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Seal(b.Epoch)
	return nil
}

// allocIDs reserves n ids. The counter is written to the catalog so ids are
// never reused, even by views whose creation did not commit.
func (c *catalogSource) allocIDs(n int) []uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = c.nextID
		c.nextID++
	}
	c.table.Put(nextIDKey, binary.BigEndian.AppendUint32(nil, c.nextID))
	return ids
}

func (c *catalogSource) put(r *catalog.Relation) error {
	v, err := r.Encode()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Put(relKey(r.ID), v)
	return nil
}

func (c *catalogSource) delete(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Delete(relKey(id))
}

// loadCatalog reads the committed catalog.
func (e *Engine) loadCatalog() error {
	snap := e.store.Snapshot()
	defer snap.Release()
	e.catSrc.nextID = 1
	if v, ok, err := snap.Get(catalogTable, nextIDKey); err != nil {
		return err
	} else if ok {
		e.catSrc.nextID = binary.BigEndian.Uint32(v)
	}
	if err := e.loadDatabases(snap); err != nil {
		return err
	}
	if err := e.loadSchemas(snap); err != nil {
		return err
	}
	if err := e.loadFunctions(snap); err != nil {
		return err
	}
	if err := e.loadRoles(snap); err != nil {
		return err
	}
	it, err := snap.NewIter(catalogTable, relPrefix, state.PrefixEnd(relPrefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		r, err := catalog.Decode(it.Value())
		if err != nil {
			return err
		}
		if r.Replaces != 0 {
			e.dropReplacement(r) // an ALTER ... AS the crash interrupted
			continue
		}
		e.cat.Add(r)
	}
	return it.Error()
}

// cleanupSource clears the state tables of dropped relations at the next
// barrier, so the deletion is part of a checkpoint.
type cleanupSource struct {
	mu      sync.Mutex
	pending []*state.Table
}

func (c *cleanupSource) add(ts ...*state.Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, ts...)
}

func (c *cleanupSource) Inject(_ context.Context, b *barrier.Barrier) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.pending {
		t.Clear()
		t.Seal(b.Epoch)
	}
	c.pending = nil
	return nil
}

// restoreDataflows rebuilds table writers and view dataflows from the
// catalog, in creation order so that every view's inputs exist.
func (e *Engine) restoreDataflows() error {
	for _, r := range e.cat.All() {
		switch r.Kind {
		case catalog.Table:
			w, err := newTableWriter(e, r)
			if err != nil {
				return err
			}
			e.tables[r.ID] = w
			e.coord.AddSource(w)
			switch {
			case isKafkaTable(r):
				e.runKafkaTable(w)
			case r.CDCOffsetTable != 0:
				e.restoreCDCTable(w)
			}
		case catalog.MaterializedView, catalog.Sink:
			if err := e.restoreView(r); err != nil {
				return fmt.Errorf("restoring %s %s: %w", r.Kind, r.Name, err)
			}
		}
	}
	return nil
}

// relationNames lists the names of relations of kind, sorted; names
// outside public are qualified with their schema.
func (e *Engine) relationNames(cat *catalog.Catalog, kind catalog.Kind) []string {
	var names []string
	for _, r := range cat.InDatabase() {
		if r.Kind == kind {
			if r.Schema == catalog.Public {
				names = append(names, r.Name)
			} else {
				names = append(names, r.QualifiedName())
			}
		}
	}
	sort.Strings(names)
	return names
}

// alignmentMode is the barrier alignment mode of a view's dataflow.
func alignmentMode(rel *catalog.Relation) barrier.Mode {
	if rel.AtLeastOnce {
		return barrier.AtLeastOnce
	}
	return barrier.ExactlyOnce
}

// checkpointStats keeps, for recent epochs, what the commit wrote and how
// long barrier alignment took in each view.
type checkpointStats struct {
	mu     sync.Mutex
	commit map[uint64]state.CommitStats
	align  map[uint64]map[string]time.Duration
}

// statsKept is how many epochs of statistics are kept.
const statsKept = 1000

func (c *checkpointStats) committed(epoch uint64, s state.CommitStats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.commit == nil {
		c.commit = map[uint64]state.CommitStats{}
	}
	c.commit[epoch] = s
	delete(c.commit, epoch-statsKept)
	if c.align != nil {
		delete(c.align, epoch-statsKept)
	}
}

func (c *checkpointStats) aligned(epoch uint64, view string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.align == nil {
		c.align = map[uint64]map[string]time.Duration{}
	}
	m := c.align[epoch]
	if m == nil {
		m = map[string]time.Duration{}
		c.align[epoch] = m
	}
	m[view] = d
}

func (c *checkpointStats) get(epoch uint64) (state.CommitStats, map[string]time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commit[epoch], maps.Clone(c.align[epoch]) // the caller reads it unlocked
}
