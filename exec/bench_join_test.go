//go:build unix

package exec

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// HashJoin benchmarks. The join is driven directly on one goroutine (no
// actor, no channels), with benchRows-row batches and, for streaming joins, a
// checkpoint (barrier and Store.Commit, synced) every joinCheckpointEvery
// batches. Generating the input batches is not timed. Arrow memory goes
// through a checked allocator, so a leak fails the benchmark.
//
// At the join's speed (tens of thousands of rows per second and core),
// joinCheckpointEvery batches are about a second of work, as with the
// default 1 s barrier interval.
//
// The left input is (k bigint, id bigint, s text), the right one (k bigint,
// id bigint, v bigint); both join on k and have the stream key id. Join keys
// are scrambled (see scrambleKey) so that consecutive keys land far apart in
// the state tables, as hashed or random keys do.
//
// (The file is unix-only for getrusage.)

const joinCheckpointEvery = 16

var joinBenchTypes = [2][]types.T{
	{types.Int64T, types.Int64T, types.TextT},
	{types.Int64T, types.Int64T, types.Int64T},
}

// joinPayloads are the values of the left input's text column.
var joinPayloads = func() []string {
	out := make([]string, 64)
	for i := range out {
		out[i] = fmt.Sprintf("payload-%02d-abcdefghijklmnop", i)
	}
	return out
}()

// scrambleKey is a bijection of int64 that spreads consecutive values over
// the whole range (multiplication by an odd constant modulo 2^64).
func scrambleKey(k int64) int64 { return int64(uint64(k) * 0x9E3779B97F4A7C15) }

// benchJoinRow is a row of either input: join key, stream key, and payload
// (the left row's text is joinPayloads[p], the right row's v is p).
type benchJoinRow struct{ k, id, p int64 }

// joinBatchBuilder accumulates the rows of one input's next batch.
type joinBatchBuilder struct {
	side int
	bs   []array.Builder
	ops  []Op
}

func newJoinBatchBuilder(mem memory.Allocator, side int) *joinBatchBuilder {
	return &joinBatchBuilder{side: side, bs: newBuilders(mem, joinBenchTypes[side])}
}

func (g *joinBatchBuilder) add(op Op, r benchJoinRow) {
	g.bs[0].(*array.Int64Builder).Append(r.k)
	g.bs[1].(*array.Int64Builder).Append(r.id)
	if g.side == 0 {
		g.bs[2].(*array.StringBuilder).Append(joinPayloads[r.p%int64(len(joinPayloads))])
	} else {
		g.bs[2].(*array.Int64Builder).Append(r.p)
	}
	g.ops = append(g.ops, op)
}

// batch returns the rows added since the last call as a batch.
func (g *joinBatchBuilder) batch() *Batch {
	n := len(g.ops)
	rec := buildRecord(SchemaOf(joinBenchTypes[g.side]), g.bs, n)
	b := NewBatch(rec, g.ops)
	g.ops = nil
	return b
}

func (g *joinBatchBuilder) release() { releaseBuilders(g.bs) }

// countRows is an Output that counts and drops the rows it receives.
type countRows struct{ rows int64 }

func (c *countRows) Emit(_ context.Context, m Message) error {
	if m.Batch != nil {
		c.rows += int64(m.Batch.Len())
	}
	m.Release()
	return nil
}

// joinTables are the state tables of the benchmarks' joins (left, right).
var joinTables = [2]state.TableID{1, 2}

// joinDriver feeds a HashJoin and checkpoints it every joinCheckpointEvery
// batches, counting input rows.
type joinDriver struct {
	j       *HashJoin
	store   *state.Store
	out     countRows
	epoch   uint64
	batches int
	inRows  int64
}

func newJoinDriver(mem memory.Allocator, typ ir.JoinType, store *state.Store) *joinDriver {
	spec := HashJoinSpec{
		Type:       typ,
		Types:      joinBenchTypes,
		Keys:       [2][]int{{0}, {0}},
		KeyTypes:   []types.T{types.Int64T},
		StreamKeys: [2][]int{{1}, {1}},
		Tables:     [2]*state.Table{store.Table(joinTables[0]), store.Table(joinTables[1])},
	}
	return &joinDriver{
		j:     NewHashJoin(mem, &eval.Context{Mem: mem}, spec),
		store: store,
		epoch: store.CommittedEpoch(),
	}
}

func (d *joinDriver) feed(tb testing.TB, side int, b *Batch) {
	d.inRows += int64(b.Len())
	if err := d.j.OnBatch(context.Background(), side, b, &d.out); err != nil {
		tb.Fatal(err)
	}
	d.batches++
	if d.batches%joinCheckpointEvery == 0 {
		d.checkpoint(tb)
	}
}

// checkpoint seals the join's state for a new epoch and commits it.
func (d *joinDriver) checkpoint(tb testing.TB) {
	d.epoch++
	if err := d.j.OnBarrier(context.Background(), &barrier.Barrier{Epoch: d.epoch}, &d.out); err != nil {
		tb.Fatal(err)
	}
	if _, err := d.store.Commit(d.epoch); err != nil {
		tb.Fatal(err)
	}
}

// Parameters of BenchmarkHashJoin's state.
const (
	// joinStateKeys join keys with joinRowsPerKey rows each on each side:
	// 1M rows per side, about 60 MB of sstables in all.
	joinStateKeys  = 1 << 18
	joinRowsPerKey = 4
	// The two block cache sizes: one that holds the whole state, one much
	// smaller than it. Pebble charges its memtables (state.Open sizes them at
	// an eighth of the cache, at least 4 MiB) to the block cache, so 8 MiB
	// leaves at most 4 MiB for blocks.
	joinCacheLarge = 1 << 30
	joinCacheSmall = 8 << 20
)

// BenchmarkHashJoin measures streaming joins over a join state of
// joinStateKeys keys with joinRowsPerKey rows per key on each side (2M rows,
// committed and compacted into sstables in an on-disk store, as a store
// holds state after running a while), once with a block cache that holds
// the whole state and once with one much smaller than it, so that probes
// read blocks from the sstables. Workloads:
//
//   - append-only/inner: both inputs only insert, alternating batches, with
//     join keys drawn uniformly from the state's keys, so that every probe
//     lands at a random place of the other side's state. out/in starts at 4
//     and grows slowly as the appended rows add matches.
//   - updates/inner and updates/left-outer: both inputs, alternating, send
//     batches of changes to their live rows: per four rows one insert (random
//     key), one delete of a random live row, and one update pair
//     (UpdateDelete + UpdateInsert) of a random live row, half of them moving
//     it to another random key; the state's size stays constant. The left
//     outer join also reads and rewrites the match count of every left row a
//     right change matches, and emits and retracts NULL-padded rows.
//
// Each (workload, cache) pair runs on its own copy of the state, which stays
// open across the b.N rounds of the sub-benchmark (the workload continues
// where the last round stopped). The first batch checks that the join finds
// the stored state: exactly 4 output rows per input row.
//
// Metrics: rows/s is input rows (both sides) per second of wall time on one
// goroutine; rows/cpu-s is input rows per CPU second of the whole process
// while the join runs (it includes Pebble's background flushes and
// compactions, which run on other goroutines); out/in is output rows per
// input row; sst-reads/row is block reads from sstable files per input row,
// outside compactions (block cache misses; the operating system's page
// cache may still hold the files, so a miss is a pread from memory, a
// checksum and a decompression, not a disk seek); state-MB is the size of
// the initial state's sstables.
func BenchmarkHashJoin(b *testing.B) {
	root := b.TempDir()
	tmpl := filepath.Join(root, "template")
	var stateBytes int64
	template := func(b *testing.B) string {
		if stateBytes == 0 {
			stateBytes = buildJoinTemplate(b, tmpl)
		}
		return tmpl
	}
	workloads := []struct {
		name    string
		typ     ir.JoinType
		updates bool
	}{
		{"append-only/inner", ir.InnerJoin, false},
		{"updates/inner", ir.InnerJoin, true},
		{"updates/left-outer", ir.LeftJoin, true},
	}
	caches := []struct {
		name string
		size int64
	}{{"cache=1GiB", joinCacheLarge}, {"cache=8MiB", joinCacheSmall}}
	n := 0
	for _, w := range workloads {
		for _, c := range caches {
			n++
			dir := filepath.Join(root, fmt.Sprint(n))
			var f *joinFixture
			b.Run(w.name+"/"+c.name, func(b *testing.B) {
				if f == nil {
					f = openJoinFixture(b, template(b), dir, c.size, w.typ, w.updates)
				}
				f.run(b)
				b.ReportMetric(float64(stateBytes)/1e6, "state-MB")
			})
			if f != nil {
				f.close(b)
			}
		}
	}
}

// joinBaseRow is row r of either side of the initial state: key r/4
// (scrambled), id r.
func joinBaseRow(r int64) benchJoinRow {
	return benchJoinRow{k: scrambleKey(r / joinRowsPerKey), id: r, p: r}
}

// buildJoinTemplate writes the initial state of BenchmarkHashJoin into a new
// store in dir, compacts it and returns the size of its sstables. Rows are
// written directly to the state tables, as HashJoin stores them (key: join
// key, stream key; value: match count joinRowsPerKey, flags, row), not
// through the join, to keep the setup short; the first batch of every
// fixture checks that the join reads them back.
func buildJoinTemplate(b *testing.B, dir string) int64 {
	store, err := state.Open(dir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	epoch := store.CommittedEpoch()
	var key, val, row []byte
	for side := range 2 {
		g := newJoinBatchBuilder(mem, side)
		codec := state.NewRowCodec(joinBenchTypes[side])
		t := store.Table(joinTables[side])
		for id := int64(0); id < joinStateKeys*joinRowsPerKey; id += benchRows {
			for r := id; r < id+benchRows; r++ {
				g.add(Insert, joinBaseRow(r))
			}
			batch := g.batch()
			cols := batch.Rec.Columns()
			for i := range batch.Len() {
				key = state.AppendKey(key[:0], types.Int64T, cols[0], i)
				key = state.AppendKey(key, types.Int64T, cols[1], i)
				row = codec.Append(row[:0], cols, i)
				val = appendStored(val[:0], joinRowsPerKey, 0, row)
				t.Put(key, val)
			}
			batch.Release()
			if (id/benchRows)%64 == 63 {
				epoch++
				t.Seal(epoch)
				if _, err := store.Commit(epoch); err != nil {
					b.Fatal(err)
				}
			}
		}
		g.release()
	}
	if err := store.Close(); err != nil {
		b.Fatal(err)
	}

	// Compact the whole store so that every run starts from the same settled
	// LSM, without compaction debt competing for the CPU. This opens the
	// store's Pebble database directly, with the table options state.Open
	// uses (bloom filters), since the state package offers no compaction.
	popts := &pebble.Options{Logger: quietPebbleLogger{}}
	popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	db, err := pebble.Open(dir, popts)
	if err != nil {
		b.Fatal(err)
	}
	if err := db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	var size int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sst") {
			info, err := e.Info()
			if err != nil {
				b.Fatal(err)
			}
			size += info.Size()
		}
	}
	return size
}

// quietPebbleLogger drops Pebble's informational messages.
type quietPebbleLogger struct{}

func (quietPebbleLogger) Infof(string, ...any) {}
func (quietPebbleLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietPebbleLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

// cloneStore copies the store in src to dst: immutable sstables and blob
// files as hard links, everything else (manifest, WAL, options) as copies.
func cloneStore(b *testing.B, src, dst string) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == "LOCK" || e.IsDir() {
			continue
		}
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob") {
			if os.Link(from, to) == nil {
				continue
			}
		}
		if err := copyFile(from, to); err != nil {
			b.Fatal(err)
		}
	}
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// countingFS counts the reads of sstable files through handles opened
// without vfs.SequentialReadsOption: Pebble reads blocks it does not find in
// its block cache that way, while compactions (and long scans) switch to a
// handle opened for sequential reads.
type countingFS struct {
	vfs.FS
	reads, bytes atomic.Int64
}

func (fs *countingFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil || !strings.HasSuffix(name, ".sst") || slices.Contains(opts, vfs.SequentialReadsOption) {
		return f, err
	}
	return &countingFile{File: f, fs: fs}, nil
}

type countingFile struct {
	vfs.File
	fs *countingFS
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.reads.Add(1)
	f.fs.bytes.Add(int64(len(p)))
	return f.File.ReadAt(p, off)
}

// processCPU returns the user and system CPU time of the process so far.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// joinFixture is one copy of BenchmarkHashJoin's state with its join, open
// across the rounds of one sub-benchmark.
type joinFixture struct {
	fs      *countingFS
	store   *state.Store
	mem     *memory.CheckedAllocator
	d       *joinDriver
	gens    [2]*joinBatchBuilder
	rng     *rand.Rand
	updates bool
	// pops are the live rows of each side (updates); nextID the next new
	// row's id (append-only).
	pops   [2]*joinPopulation
	nextID [2]int64
}

func openJoinFixture(b *testing.B, tmpl, dir string, cacheSize int64, typ ir.JoinType, updates bool) *joinFixture {
	cloneStore(b, tmpl, dir)
	f := &joinFixture{
		fs:      &countingFS{FS: vfs.Default},
		mem:     memory.NewCheckedAllocator(memory.DefaultAllocator),
		rng:     rand.New(rand.NewPCG(3, 4)),
		updates: updates,
	}
	var err error
	f.store, err = state.Open(dir, state.Options{CacheSize: cacheSize, FS: f.fs})
	if err != nil {
		b.Fatal(err)
	}
	f.d = newJoinDriver(f.mem, typ, f.store)
	const rows = joinStateKeys * joinRowsPerKey
	for side := range 2 {
		f.gens[side] = newJoinBatchBuilder(f.mem, side)
		f.nextID[side] = rows
		if updates {
			p := &joinPopulation{rows: make([]benchJoinRow, rows), nextID: rows, keys: joinStateKeys}
			for r := range p.rows {
				p.rows[r] = joinBaseRow(int64(r))
			}
			f.pops[side] = p
		}
		// One pass over the state, as a long-running join would have read
		// it: with the large cache, every block is cached afterwards.
		it, err := f.d.j.spec.Tables[side].NewIter(nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
		if n != rows {
			b.Fatalf("side %d of the join state has %d rows, want %d", side, n, rows)
		}
	}
	return f
}

// next returns the next input batch and its side.
func (f *joinFixture) next() (int, *Batch) {
	side := f.d.batches % 2
	g := f.gens[side]
	if f.updates {
		return side, f.pops[side].mixedBatch(f.rng, g)
	}
	for range benchRows {
		f.nextID[side]++
		id := f.nextID[side]
		g.add(Insert, benchJoinRow{k: scrambleKey(f.rng.Int64N(joinStateKeys)), id: id, p: id})
	}
	return side, g.batch()
}

func (f *joinFixture) run(b *testing.B) {
	d := f.d
	in0, out0 := d.inRows, d.out.rows
	reads0 := f.fs.reads.Load()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		first := d.batches == 0
		side, batch := f.next()
		b.StartTimer()
		c0 := processCPU(b)
		out := d.out.rows
		d.feed(b, side, batch)
		cpu += processCPU(b) - c0
		// Before any change of the right side, every row of the first batch
		// matches the 4 stored rows of its key.
		if first && d.out.rows-out != joinRowsPerKey*benchRows {
			b.Fatalf("the first batch of %d rows joined %d rows of the stored state, want %d",
				benchRows, d.out.rows-out, joinRowsPerKey*benchRows)
		}
	}
	b.StopTimer()
	in, out := d.inRows-in0, d.out.rows-out0
	b.ReportMetric(float64(in)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(in)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(float64(out)/float64(in), "out/in")
	b.ReportMetric(float64(f.fs.reads.Load()-reads0)/float64(in), "sst-reads/row")
}

func (f *joinFixture) close(b *testing.B) {
	f.gens[0].release()
	f.gens[1].release()
	if err := f.store.Close(); err != nil {
		b.Fatal(err)
	}
	f.mem.AssertSize(b, 0)
}

// joinPopulation is the set of live rows of one input, for generating
// deletes and updates of existing rows.
type joinPopulation struct {
	rows   []benchJoinRow
	nextID int64
	keys   int64
}

func (p *joinPopulation) newRow(rng *rand.Rand) benchJoinRow {
	p.nextID++
	return benchJoinRow{k: scrambleKey(rng.Int64N(p.keys)), id: p.nextID, p: rng.Int64N(1 << 20)}
}

// mixedBatch returns benchRows changes to p: per group of four rows, one
// insert, one delete and one update pair.
func (p *joinPopulation) mixedBatch(rng *rand.Rand, g *joinBatchBuilder) *Batch {
	for n := 0; n < benchRows; n += 4 {
		r := p.newRow(rng)
		p.rows = append(p.rows, r)
		g.add(Insert, r)

		i := rng.IntN(len(p.rows))
		g.add(Delete, p.rows[i])
		p.rows[i] = p.rows[len(p.rows)-1]
		p.rows = p.rows[:len(p.rows)-1]

		i = rng.IntN(len(p.rows))
		old := p.rows[i]
		upd := old
		if rng.IntN(2) == 0 {
			upd.k = scrambleKey(rng.Int64N(p.keys))
		} else {
			upd.p = rng.Int64N(1 << 20)
		}
		g.add(UpdateDelete, old)
		g.add(UpdateInsert, upd)
		p.rows[i] = upd
	}
	return g.batch()
}

// BenchmarkHashJoinBatch measures the hash join of a batch query (SELECT
// ... JOIN): inputs without stream keys (stored rows are numbered), the right
// input fed first (build), then the left one (probe), in benchRows-row
// batches, state in uncommitted scratch tables of an in-memory store as the
// engine's batch queries use it. The right input has 4 rows per key and
// every left row matches 4 of them. One op is a whole join of rows rows per
// input; rows/s counts both inputs.
func BenchmarkHashJoinBatch(b *testing.B) {
	for _, rows := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("rows=%dK", rows>>10), func(b *testing.B) { benchJoinBatch(b, rows) })
	}
}

func benchJoinBatch(b *testing.B, rows int) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	store, err := state.Open(state.MemoryDir, state.Options{CacheSize: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	keys := int64(rows / 4)
	var inputs [2][]*Batch
	for side := range 2 {
		g := newJoinBatchBuilder(mem, side)
		for r := 0; r < rows; r++ {
			k := int64(r / 4)
			if side == 0 {
				k = rng.Int64N(keys)
			}
			g.add(Insert, benchJoinRow{k: scrambleKey(k), id: int64(r), p: int64(r)})
			if (r+1)%benchRows == 0 || r == rows-1 {
				inputs[side] = append(inputs[side], g.batch())
			}
		}
		g.release()
	}
	defer func() {
		for _, bs := range inputs {
			for _, batch := range bs {
				batch.Release()
			}
		}
	}()

	var tableID state.TableID
	var out countRows
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ids := [2]state.TableID{tableID + 1, tableID + 2}
		tableID += 2
		spec := HashJoinSpec{
			Type:     ir.InnerJoin,
			Types:    joinBenchTypes,
			Keys:     [2][]int{{0}, {0}},
			KeyTypes: []types.T{types.Int64T},
			Sequence: [2]bool{true, true},
			Tables:   [2]*state.Table{store.Table(ids[0]), store.Table(ids[1])},
		}
		j := NewHashJoin(mem, &eval.Context{Mem: mem}, spec)
		for _, side := range []int{1, 0} {
			for _, batch := range inputs[side] {
				batch.Rec.Retain()
				if err := j.OnBatch(context.Background(), side, &Batch{Rec: batch.Rec, Ops: batch.Ops}, &out); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := j.OnBarrier(context.Background(), &barrier.Barrier{Epoch: 1, Kind: barrier.Final}, &out); err != nil {
			b.Fatal(err)
		}
		j.Close()
		store.ReleaseTable(ids[0])
		store.ReleaseTable(ids[1])
	}
	b.StopTimer()
	if want := int64(4 * rows * b.N); out.rows != want {
		b.Fatalf("the join emitted %d rows, want %d", out.rows, want)
	}
	b.ReportMetric(float64(2*rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
