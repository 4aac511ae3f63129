package exec

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// backfillRig is an upstream table (id 1, rows (k bigint, v text) keyed by
// k) written by the test, a backfill state table (id 2), and a model of the
// rows the backfill has passed downstream.
type backfillRig struct {
	t     *testing.T
	mem   *memory.CheckedAllocator
	dir   string
	store *state.Store
	up    *state.Table
	bf    *Backfill
	ts    []types.T
	codec *state.RowCodec
	epoch uint64
	// upstream is the upstream's rows; view is what the backfill emitted,
	// applied (the view's state, committed with the backfill's).
	upstream    map[int64]string
	view        map[int64]string
	committed   map[int64]string // view as of the last commit
	upCommitted map[int64]string // upstream as of the last commit
	chunk       int
	doneAt      uint64
	// watermarks are the values of the watermarks passed on.
	watermarks []int64
	// shards > 1 makes the upstream a parallel view's table: each key is
	// written on the handle (state.Store.TableShard) of its virtual node's
	// owner among shards actors.
	shards int
}

func newBackfillRig(t *testing.T, chunk int) *backfillRig {
	r := &backfillRig{t: t, mem: memory.NewCheckedAllocator(memory.NewGoAllocator()), dir: filepath.Join(t.TempDir(), "data"),
		ts: []types.T{types.Int64T, types.TextT}, upstream: map[int64]string{}, view: map[int64]string{}, committed: map[int64]string{}, upCommitted: map[int64]string{}, chunk: chunk}
	r.codec = state.NewRowCodec(r.ts)
	r.open()
	return r
}

func (r *backfillRig) open() {
	s, err := state.Open(r.dir, state.Options{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.store = s
	r.epoch = s.CommittedEpoch()
	r.up = s.Table(1)
	bf, err := NewBackfill(BackfillConfig{
		Mem: r.mem, Input: 0, Upstream: r.up, Types: r.ts, Key: []int{0}, State: s.Table(2), ChunkRows: r.chunk,
		OnDone: func(epoch uint64) { r.doneAt = epoch },
		Next:   OutputFunc(r.apply),
	})
	if err != nil {
		r.t.Fatal(err)
	}
	r.bf = bf
}

// restart drops everything not committed and reopens the store.
func (r *backfillRig) restart() {
	if err := r.store.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.view = maps.Clone(r.committed)
	r.upstream = maps.Clone(r.upCommitted)
	r.open()
}

func (r *backfillRig) key(k int64) []byte {
	b := array.NewInt64Builder(r.mem)
	defer b.Release()
	b.Append(k)
	a := b.NewArray()
	defer a.Release()
	return state.AppendKey(nil, types.Int64T, a, 0)
}

// apply is the backfill's downstream: it applies changes to the view model,
// checking that they are consistent with it.
func (r *backfillRig) apply(_ context.Context, m Message) error {
	if m.Watermark != nil {
		r.watermarks = append(r.watermarks, m.Watermark.Value)
	}
	if m.Batch == nil {
		return nil
	}
	defer m.Batch.Release()
	ks := m.Batch.Rec.Column(0).(*array.Int64)
	vs := m.Batch.Rec.Column(1).(*array.String)
	for i, op := range m.Batch.Ops {
		k, v := ks.Value(i), vs.Value(i)
		old, had := r.view[k]
		if op.IsInsert() {
			if had {
				return fmt.Errorf("insert of key %d, present with %q", k, old)
			}
			r.view[k] = v
		} else {
			if !had || old != v {
				return fmt.Errorf("delete of key %d %q, present %v with %q", k, v, had, old)
			}
			delete(r.view, k)
		}
	}
	return nil
}

type change struct {
	op Op
	k  int64
	v  string
}

// write applies changes to the upstream table and sends them through the
// backfill as one batch.
func (r *backfillRig) write(cs ...change) {
	kb, vb := array.NewInt64Builder(r.mem), array.NewStringBuilder(r.mem)
	defer kb.Release()
	defer vb.Release()
	ops := make([]Op, len(cs))
	for i, c := range cs {
		kb.Append(c.k)
		vb.Append(c.v)
		ops[i] = c.op
		if c.op.IsInsert() {
			r.upstream[c.k] = c.v
			r.upHandle(c.k).Put(r.key(c.k), r.codec.AppendDatums(nil, []types.Datum{types.DInt(c.k), types.DText(c.v)}))
		} else {
			delete(r.upstream, c.k)
			r.upHandle(c.k).Delete(r.key(c.k))
		}
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
	rec := array.NewRecordBatch(SchemaOf(r.ts), cols, int64(len(cs)))
	for _, c := range cols {
		c.Release()
	}
	if err := r.bf.Emit(context.Background(), Message{Batch: NewBatch(rec, ops)}); err != nil {
		r.t.Fatal(err)
	}
}

// upHandle returns the handle of the upstream table that writes key k.
func (r *backfillRig) upHandle(k int64) *state.Table {
	if r.shards <= 1 {
		return r.up
	}
	return r.store.TableShard(1, state.VNodeOwner(state.VNode(r.key(k)), r.shards))
}

// barrier ends the epoch: the upstream seals, the barrier passes the
// backfill, the actor seals the backfill's state; commit commits it. It
// checks that the view holds exactly the upstream's rows up to the
// position.
func (r *backfillRig) barrier(commit bool) {
	r.t.Helper()
	r.epoch++
	for i := range max(r.shards, 1) {
		r.store.TableShard(1, i).Seal(r.epoch)
	}
	if err := r.bf.Emit(context.Background(), Message{Barrier: &barrier.Barrier{Epoch: r.epoch}}); err != nil {
		r.t.Fatal(err)
	}
	r.store.Table(2).Seal(r.epoch)
	want := map[int64]string{}
	for k, v := range r.upstream {
		if r.bf.Done() || (r.bf.pos != nil && string(r.key(k)) <= string(r.bf.pos)) {
			want[k] = v
		}
	}
	if !maps.Equal(want, r.view) {
		r.t.Fatalf("epoch %d: view %v, want %v (upstream %v)", r.epoch, sorted(r.view), sorted(want), sorted(r.upstream))
	}
	if commit {
		if _, err := r.store.Commit(r.epoch); err != nil {
			r.t.Fatal(err)
		}
		r.committed = maps.Clone(r.view)
		r.upCommitted = maps.Clone(r.upstream)
	}
}

func sorted(m map[int64]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%d:%s", k, m[k]))
	}
	return out
}

func (r *backfillRig) close() {
	if err := r.store.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.mem.AssertSize(r.t, 0)
}

func TestBackfillInterleaved(t *testing.T) {
	r := newBackfillRig(t, 3)
	defer r.close()
	for k := int64(1); k <= 10; k++ {
		r.write(change{Insert, k, "a"})
	}
	r.barrier(true) // before the first barrier nothing passes: position nil
	if len(r.view) != 3 {
		t.Fatalf("after the first chunk: %v", sorted(r.view))
	}
	// Below the position (1..3): passed on. Above: dropped, read later.
	r.write(
		change{UpdateDelete, 2, "a"}, change{UpdateInsert, 2, "b"}, // update below
		change{Delete, 5, "a"},                                     // delete of a row not yet backfilled
		change{UpdateDelete, 6, "a"}, change{UpdateInsert, 6, "c"}, // update above
		change{Insert, 11, "n"}, // insert above
		change{Delete, 3, "a"}, change{Insert, 0, "z"},
	)
	// A pair straddling the position: its delete half passes as a Delete.
	r.write(change{UpdateDelete, 1, "a"}, change{UpdateInsert, 1, "d"})
	r.write(change{UpdateDelete, 4, "a"}, change{UpdateInsert, 4, "e"})
	r.barrier(true)
	r.write(change{Delete, 4, "e"}, change{Insert, 3, "again"}) // 4 is at the position now
	r.barrier(false)
	for !r.bf.Done() {
		r.write(change{Insert, 100 + int64(r.epoch), "late"})
		r.barrier(true)
	}
	r.write(change{Delete, 0, "z"}, change{Insert, 1000, "after"}) // passes on
	r.barrier(true)
	if !maps.Equal(r.view, r.upstream) {
		t.Fatalf("done: view %v, upstream %v", sorted(r.view), sorted(r.upstream))
	}
}

// TestBackfillParallelUpstream backfills from a parallel view's table,
// whose actors write their keys on handles of their own, over epochs
// sealed but not committed (several checkpoints in flight, or a checkpoint
// frequency above one): each chunk must see every actor's rows of those
// epochs, not only those of the handle the backfill was given, or the rows
// changed meanwhile are missing from the new view for good (their changes
// were above the position, and so dropped).
func TestBackfillParallelUpstream(t *testing.T) {
	r := newBackfillRig(t, 4)
	r.shards = 3
	defer r.close()
	for k := int64(1); k <= 12; k++ {
		r.write(change{Insert, k, "a"})
	}
	r.barrier(true)
	for i := 0; !r.bf.Done(); i++ {
		for k := int64(1); k <= 14; k += 3 {
			v := r.upstream[k+int64(i)%3]
			if v != "" {
				r.write(change{UpdateDelete, k + int64(i)%3, v}, change{UpdateInsert, k + int64(i)%3, fmt.Sprint(v, i)})
			} else {
				r.write(change{Insert, k + int64(i)%3, fmt.Sprint(i)})
			}
		}
		r.barrier(i%2 == 1) // every other barrier is a checkpoint
	}
	r.barrier(true)
	if !maps.Equal(r.view, r.upstream) {
		t.Fatalf("done: view %v, upstream %v", sorted(r.view), sorted(r.upstream))
	}
}

// TestBackfillResume restarts the store at random points of a backfill under
// random changes: the backfill resumes from its committed position and the
// committed view, and ends equal to the upstream.
func TestBackfillResume(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { testBackfillResume(t, seed) })
	}
}

func testBackfillResume(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	r := newBackfillRig(t, 3+int(seed%3)*5)
	defer r.close()
	for k := int64(0); k < 200; k++ {
		r.write(change{Insert, k * 2, "init"})
	}
	r.barrier(true)
	restarts := 0
	for i := 0; !r.bf.Done() || i < 60; i++ {
		for j := 0; j < 5; j++ {
			k := rng.Int64N(450)
			v, ok := r.upstream[k]
			switch {
			case !ok:
				r.write(change{Insert, k, fmt.Sprint(i)})
			case rng.IntN(2) == 0:
				r.write(change{Delete, k, v})
			default:
				r.write(change{UpdateDelete, k, v}, change{UpdateInsert, k, fmt.Sprint(i)})
			}
		}
		r.barrier(rng.IntN(3) != 0)
		if rng.IntN(8) == 0 {
			r.restart()
			restarts++
		}
		if i > 1000 {
			t.Fatal("backfill does not end")
		}
	}
	if !maps.Equal(r.view, r.upstream) {
		t.Fatalf("done: view %v, upstream %v", sorted(r.view), sorted(r.upstream))
	}
	if restarts == 0 || r.doneAt == 0 {
		t.Fatalf("restarts %d, done at %d", restarts, r.doneAt)
	}
}

// TestBackfillHoldsWatermarks: watermarks wait for the end of the backfill
// (rows it emits later may be older); then the last one is passed on.
func TestBackfillHoldsWatermarks(t *testing.T) {
	r := newBackfillRig(t, 2)
	defer r.close()
	for k := int64(1); k <= 5; k++ {
		r.write(change{Insert, k, "a"})
	}
	wm := func(v int64) {
		if err := r.bf.Emit(context.Background(), Message{Watermark: &barrier.Watermark{Column: 0, Value: v}}); err != nil {
			t.Fatal(err)
		}
	}
	wm(3)
	r.barrier(true)
	wm(4)
	wm(5)
	if len(r.watermarks) != 0 {
		t.Fatalf("watermarks passed during the backfill: %v", r.watermarks)
	}
	for !r.bf.Done() {
		r.barrier(true)
	}
	wm(6)
	if fmt.Sprint(r.watermarks) != "[5 6]" {
		t.Fatalf("watermarks %v, want [5 6]", r.watermarks)
	}
}
