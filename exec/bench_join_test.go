package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// HashJoin benchmarks. The join is driven directly on one goroutine (no
// actor, no channels), with benchRows-row batches and, for streaming joins, a
// checkpoint (barrier and Store.Commit) every joinCheckpointEvery batches.
// Metrics: rows/s is input rows (both sides together) per second on one
// core; out/in is output rows per input row. Generating the input batches is
// not timed. Arrow memory goes through a checked allocator, so a leak fails
// the benchmark.
//
// The left input is (k bigint, id bigint, s text), the right one (k bigint,
// id bigint, v bigint); both join on k and have the stream key id. Join keys
// are scrambled (see scrambleKey) so that consecutive keys land far apart in
// the state tables, as hashed or random keys do.

const joinCheckpointEvery = 64

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

func newJoinDriver(mem memory.Allocator, typ JoinType, store *state.Store, tables [2]state.TableID) *joinDriver {
	spec := HashJoinSpec{
		Type:       typ,
		Types:      joinBenchTypes,
		Keys:       [2][]int{{0}, {0}},
		KeyTypes:   []types.T{types.Int64T},
		StreamKeys: [2][]int{{1}, {1}},
		Tables:     [2]*state.Table{store.Table(tables[0]), store.Table(tables[1])},
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

// reportJoin reports rows/s and out/in.
func reportJoin(b *testing.B, inRows, outRows int64) {
	b.ReportMetric(float64(inRows)/b.Elapsed().Seconds(), "rows/s")
	if inRows > 0 {
		b.ReportMetric(float64(outRows)/float64(inRows), "out/in")
	}
}

// BenchmarkHashJoin measures streaming joins with their state in an
// in-memory store:
//
//   - append-only/inner: both inputs only insert. Every join key gets 4 rows
//     on each side, spread over two consecutive batches of each input (keys
//     advance in windows of 1024), so each key produces 16 pairs: 2 output
//     rows per input row, and the state grows by every row.
//   - updates/inner and updates/left-outer: each input holds 65536 live rows
//     over 32768 keys (2 per key and side: a probe finds 2 matches on average
//     and 13% of left rows have none); every batch is a quarter inserts, a
//     quarter deletes and half update pairs (UpdateDelete + UpdateInsert), of
//     which half move the row to another key. The left outer join maintains
//     match counts and emits and retracts NULL-padded rows.
func BenchmarkHashJoin(b *testing.B) {
	b.Run("append-only/inner", func(b *testing.B) { benchJoinAppendOnly(b) })
	b.Run("updates/inner", func(b *testing.B) { benchJoinUpdates(b, InnerJoin) })
	b.Run("updates/left-outer", func(b *testing.B) { benchJoinUpdates(b, LeftJoin) })
}

func benchJoinAppendOnly(b *testing.B) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	d := newJoinDriver(mem, InnerJoin, store, [2]state.TableID{1, 2})
	gens := [2]*joinBatchBuilder{newJoinBatchBuilder(mem, 0), newJoinBatchBuilder(mem, 1)}
	defer gens[0].release()
	defer gens[1].release()

	// Batch w of each input holds copies 0 and 1 of the keys of window w and
	// copies 2 and 3 of those of window w-1, in a fixed shuffled order.
	const window = benchRows / 4
	rng := rand.New(rand.NewPCG(1, 2))
	order := rng.Perm(benchRows)
	var nextID [2]int64
	next := func(side int, w int64) *Batch {
		for _, slot := range order {
			key, cp := int64(slot/4), slot%4
			kw := w
			if cp >= 2 {
				kw = w - 1
			}
			nextID[side]++
			gens[side].add(Insert, benchJoinRow{k: scrambleKey(kw*window + key), id: nextID[side], p: nextID[side]})
		}
		return gens[side].batch()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		side, w := i%2, int64(i/2)
		b.StopTimer()
		batch := next(side, w)
		b.StartTimer()
		d.feed(b, side, batch)
	}
	reportJoin(b, d.inRows, d.out.rows)
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

func benchJoinUpdates(b *testing.B, typ JoinType) {
	const live, keys = 1 << 16, 1 << 15
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	d := newJoinDriver(mem, typ, store, [2]state.TableID{1, 2})
	gens := [2]*joinBatchBuilder{newJoinBatchBuilder(mem, 0), newJoinBatchBuilder(mem, 1)}
	defer gens[0].release()
	defer gens[1].release()
	rng := rand.New(rand.NewPCG(3, 4))
	pops := [2]*joinPopulation{{keys: keys}, {keys: keys}}

	// Initial state: live rows on each side, inserted through the join.
	for n := 0; n < live; n += benchRows {
		for side := range 2 {
			for range benchRows {
				r := pops[side].newRow(rng)
				pops[side].rows = append(pops[side].rows, r)
				gens[side].add(Insert, r)
			}
			d.feed(b, side, gens[side].batch())
		}
	}
	d.checkpoint(b)
	in0, out0 := d.inRows, d.out.rows

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		side := i % 2
		b.StopTimer()
		batch := pops[side].mixedBatch(rng, gens[side])
		b.StartTimer()
		d.feed(b, side, batch)
	}
	reportJoin(b, d.inRows-in0, d.out.rows-out0)
}

// BenchmarkHashJoinState measures probes into a join state much larger than
// the store's block cache, against the same state with a cache that holds
// it. The state (stateRowsPerSide rows on each side of an inner join, 4 rows
// per join key, in a Pebble store on disk) is written once; each
// sub-benchmark reopens it with its cache size, reads the probed side once
// to warm the cache, and then feeds left batches of new rows with random
// keys: each row finds 4 matches at random places of the right side's
// state. The new rows are committed every joinCheckpointEvery batches.
//
// "Out of the cache" means out of Pebble's block cache: the operating
// system's page cache may still hold the files, so a miss costs a block read
// from memory, a checksum and a decompression, not a disk seek.
func BenchmarkHashJoinState(b *testing.B) {
	const rowsPerSide, keys = 1 << 20, 1 << 18
	dir := b.TempDir()
	buildJoinState(b, dir, rowsPerSide, keys)
	for _, c := range []struct {
		name string
		size int64
	}{{"cache=1MiB", 1 << 20}, {"cache=256MiB", 256 << 20}} {
		b.Run(c.name, func(b *testing.B) { benchJoinProbe(b, dir, c.size, keys) })
	}
}

// buildJoinState writes rowsPerSide rows for each input of an inner join
// into the state tables 1 (left) and 2 (right) of a store in dir, as
// HashJoin stores them: key k (scrambled) has ids 4k..4k+3 on each side.
// Rows are written directly to the tables, not through the join, to keep
// the setup short; benchJoinProbe checks that the join reads them back.
func buildJoinState(b *testing.B, dir string, rowsPerSide, keys int64) {
	store, err := state.Open(dir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	d := newJoinDriver(mem, InnerJoin, store, [2]state.TableID{1, 2})
	var key, val []byte
	for side := range 2 {
		g := newJoinBatchBuilder(mem, side)
		t := d.j.spec.Tables[side]
		for id := int64(0); id < rowsPerSide; id += benchRows {
			for r := id; r < id+benchRows; r++ {
				g.add(Insert, benchJoinRow{k: scrambleKey(r / (rowsPerSide / keys)), id: r, p: r})
			}
			batch := g.batch()
			cols := batch.Rec.Columns()
			for i := range batch.Len() {
				key = state.AppendKey(key[:0], types.Int64T, cols[0], i)
				key = state.AppendKey(key, types.Int64T, cols[1], i)
				val = appendStored(val[:0], 0, 0, d.j.codecs[side].Append(nil, cols, i))
				t.Put(key, val)
			}
			batch.Release()
			if (id/benchRows)%64 == 63 {
				d.checkpoint(b)
			}
		}
		g.release()
	}
	d.checkpoint(b)
	if err := store.Close(); err != nil {
		b.Fatal(err)
	}
}

// joinProbeIDs numbers the probe rows of every run of benchJoinProbe, so
// that they never collide with rows committed by an earlier run.
var joinProbeIDs int64 = 1 << 40

func benchJoinProbe(b *testing.B, dir string, cacheSize, keys int64) {
	store, err := state.Open(dir, state.Options{CacheSize: cacheSize})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			b.Fatal(err)
		}
	}()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(b, 0)
	d := newJoinDriver(mem, InnerJoin, store, [2]state.TableID{1, 2})
	g := newJoinBatchBuilder(mem, 0)
	defer g.release()
	rng := rand.New(rand.NewPCG(5, 6))
	next := func() *Batch {
		for range benchRows {
			joinProbeIDs++
			g.add(Insert, benchJoinRow{k: scrambleKey(rng.Int64N(keys)), id: joinProbeIDs, p: joinProbeIDs})
		}
		return g.batch()
	}

	// Warm the cache with one pass over the right side's state.
	it, err := d.j.spec.Tables[1].NewIter(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
	// The join must find every stored row: 4 matches per probe.
	d.feed(b, 0, next())
	if d.out.rows != 4*benchRows {
		b.Fatalf("a probe batch of %d rows joined %d rows of the built state, want %d", benchRows, d.out.rows, 4*benchRows)
	}
	in0, out0 := d.inRows, d.out.rows

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		batch := next()
		b.StartTimer()
		d.feed(b, 0, batch)
	}
	reportJoin(b, d.inRows-in0, d.out.rows-out0)
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
			Type:     InnerJoin,
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
