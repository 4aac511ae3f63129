//go:build cgo

package exec

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/memlimit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// topNCase is one random TopN configuration.
type topNCase struct {
	group         bool
	keys          []ir.SortKey
	offset, limit int64
	kind          ir.RankKind
	rankCol       bool
	cacheGroups   int
	// cacheBytes, if set, is the share of the operator caches' pool the
	// TopN evicts to.
	cacheBytes int64
	// appendOnly cases insert only, and tell the TopN so.
	appendOnly bool
}

func (c topNCase) String() string {
	return fmt.Sprintf("group=%v keys=%v offset=%d limit=%d kind=%s rank=%v cache=%d cache-bytes=%d append-only=%v",
		c.group, c.keys, c.offset, c.limit, c.kind, c.rankCol, c.cacheGroups, c.cacheBytes, c.appendOnly)
}

// The test rows: g (group), id (stream key), v and w (order keys), all with
// few distinct values and NULLs, so that peers are common.
var topNTypes = []types.T{types.Int64T, types.Int64T, types.Int64T, types.TextT}

type topNTestRow struct {
	id   int64
	g, v *int64
	w    *string
}

func (r topNTestRow) text() string {
	f := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	w := "NULL"
	if r.w != nil {
		w = *r.w
	}
	return fmt.Sprintf("%s %d %s %s", f(r.g), r.id, f(r.v), w)
}

var topNKeyChoices = [][]ir.SortKey{
	{{Column: 2}},
	{{Column: 2, Desc: true, NullsFirst: true}},
	{{Column: 2, NullsFirst: true}, {Column: 3, Desc: true}},
	{{Column: 3}, {Column: 2, Desc: true}},
	nil,
}

func randomTopNCase(rng *rand.Rand) topNCase {
	c := topNCase{
		group:   rng.Intn(2) == 0,
		keys:    topNKeyChoices[rng.Intn(len(topNKeyChoices))],
		offset:  int64(rng.Intn(3)),
		limit:   int64(rng.Intn(4)),
		kind:    ir.RankKind(rng.Intn(4)),
		rankCol: rng.Intn(2) == 0,
	}
	if rng.Intn(2) == 0 {
		c.cacheGroups = 1 + rng.Intn(2)
	}
	c.appendOnly = rng.Intn(3) == 0
	if c.cacheGroups == 0 && c.limit%2 == 1 {
		// Bounded by bytes instead (a few groups' worth), without drawing
		// from rng so that the other cases stay as they were.
		c.cacheBytes = 400
	}
	return c
}

// compareTopNRows orders rows as the TopN must: by the keys, then by id.
func compareTopNRows(keys []ir.SortKey, a, b topNTestRow) int {
	for _, k := range keys {
		var c int
		var an, bn bool
		switch k.Column {
		case 2:
			an, bn = a.v == nil, b.v == nil
			if !an && !bn {
				c = cmp.Compare(*a.v, *b.v)
			}
		case 3:
			an, bn = a.w == nil, b.w == nil
			if !an && !bn {
				c = strings.Compare(*a.w, *b.w)
			}
		}
		switch {
		case an && bn:
			c = 0
		case an || bn:
			c = 1
			if an == k.NullsFirst {
				c = -1
			}
		case k.Desc:
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(a.id, b.id)
}

// expectTopN computes the TopN's output over rows by sorting each group.
func expectTopN(c topNCase, rows map[int64]topNTestRow) map[int64]string {
	groups := map[string][]topNTestRow{}
	for _, r := range rows {
		g := ""
		if c.group {
			g = fmt.Sprint(r.g != nil, r.g)
			if r.g != nil {
				g = fmt.Sprint(*r.g)
			}
		}
		groups[g] = append(groups[g], r)
	}
	out := map[int64]string{}
	for _, rs := range groups {
		slices.SortFunc(rs, func(a, b topNTestRow) int { return compareTopNRows(c.keys, a, b) })
		var rank, dense int64
		for p, r := range rs {
			pos := int64(p)
			peer := p > 0 && compareTopNRows(c.keys, rs[p-1], topNTestRow{id: rs[p-1].id, g: r.g, v: r.v, w: r.w}) == 0
			if !peer {
				rank, dense = pos+1, dense+1
			}
			num, in := pos+1, false
			switch c.kind {
			case ir.RowNumber:
				in = pos >= c.offset && pos < c.offset+c.limit
			case ir.Rank:
				num, in = rank, rank > c.offset && rank <= c.offset+c.limit
			case ir.DenseRank:
				num, in = dense, dense > c.offset && dense <= c.offset+c.limit
			case ir.WithTies:
				last := c.offset + c.limit - 1
				in = pos >= c.offset && pos <= last ||
					c.limit > 0 && pos > last && last < int64(len(rs)) &&
						compareTopNRows(c.keys, rs[last], topNTestRow{id: rs[last].id, g: r.g, v: r.v, w: r.w}) == 0
			}
			if in {
				s := r.text()
				if c.rankCol {
					s += fmt.Sprintf(" %d", num)
				}
				out[r.id] = s
			}
		}
	}
	return out
}

// TestTopNRandom runs random inserts, deletes and updates (small limits,
// many peers, NULLs, groups) through random TopN configurations with random
// barriers, commits, restarts right after a commit and crashes that lose the
// uncommitted epochs. At every barrier the accumulated output must equal the
// TopN of the current rows computed by sorting them, every change must apply
// to the output (a deletion deletes the row output before, an insertion
// adds a row absent from it) and an epoch's changes must be net.
func TestTopNRandom(t *testing.T) {
	for seed := int64(1); seed <= 100; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := randomTopNCase(rng)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runTopNRandom(t, rng, c) })
	}
}

func runTopNRandom(t *testing.T, rng *rand.Rand, c topNCase) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	fs := vfs.NewMem()
	open := func() *state.Store {
		s, err := state.Open(state.MemoryDir, state.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	store := open()
	defer func() { store.Close() }()
	spec := TopNSpec{
		Types: topNTypes, Keys: c.keys, InputKey: []int{1},
		Offset: c.offset, Limit: c.limit, Kind: c.kind, RankCol: c.rankCol,
		CacheGroups: c.cacheGroups, AppendOnly: c.appendOnly,
	}
	if c.group {
		spec.GroupCols = []int{0}
	}
	outTypes := topNTypes
	if c.rankCol {
		outTypes = append(slices.Clone(topNTypes), types.Int64T)
	}
	if c.cacheBytes > 0 {
		spec.CachePool = memlimit.NewPool("operator_caches", c.cacheBytes)
	}
	var op *TopN
	start := func() {
		if op != nil {
			op.Close()
		}
		spec.Table = store.Table(1)
		op = NewTopN(mem, spec)
	}
	defer func() {
		op.Close()
		if n := spec.CachePool.Used(); n != 0 {
			t.Errorf("%s: %d bytes left in the pool after Close", c, n)
		}
	}()
	start()

	rows := map[int64]topNTestRow{}
	out := map[int64]string{}
	committedRows, committedOut := maps.Clone(rows), maps.Clone(out)
	var epochOps []string
	collect := OutputFunc(func(_ context.Context, m Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		for i, s := range formatRows(m.Batch, outTypes, false) {
			o := m.Batch.Ops[i]
			id := m.Batch.Rec.Column(1).(interface{ Value(int) int64 }).Value(i)
			epochOps = append(epochOps, fmt.Sprintf("%s %s", o, s))
			if o.IsInsert() {
				if prev, ok := out[id]; ok {
					return fmt.Errorf("%s %s: id %d is already output as %s", o, s, id, prev)
				}
				if o == UpdateInsert && (i == 0 || m.Batch.Ops[i-1] != UpdateDelete) {
					return fmt.Errorf("U+ %s without U-", s)
				}
				out[id] = s
			} else {
				if out[id] != s {
					return fmt.Errorf("%s %s: output has %q", o, s, out[id])
				}
				delete(out, id)
			}
		}
		return nil
	})
	small := func(n int) *int64 {
		if rng.Intn(5) == 0 {
			return nil
		}
		v := int64(rng.Intn(n))
		return &v
	}
	text := func() *string {
		if rng.Intn(5) == 0 {
			return nil
		}
		s := []string{"", "a", "b"}[rng.Intn(3)]
		return &s
	}
	nextID := int64(0)
	epoch := uint64(0)
	for step := 0; step < 150; step++ {
		var batch []topNTestRow
		var ops []Op
		for n := 1 + rng.Intn(4); n > 0; n-- {
			ids := slices.Sorted(maps.Keys(rows))
			x := rng.Intn(10)
			if c.appendOnly {
				x = 9
			}
			switch {
			case x < 3 && len(ids) > 0:
				r := rows[ids[rng.Intn(len(ids))]]
				delete(rows, r.id)
				batch, ops = append(batch, r), append(ops, Delete)
			case x < 5 && len(ids) > 0:
				r := rows[ids[rng.Intn(len(ids))]]
				nr := r
				switch rng.Intn(3) {
				case 0:
					nr.v = small(4)
				case 1:
					nr.w = text()
				default:
					nr.g = small(3)
				}
				rows[r.id] = nr
				batch, ops = append(batch, r, nr), append(ops, UpdateDelete, UpdateInsert)
			default:
				nextID++
				r := topNTestRow{id: nextID, g: small(3), v: small(4), w: text()}
				rows[r.id] = r
				batch, ops = append(batch, r), append(ops, Insert)
			}
		}
		bs := newBuilders(mem, topNTypes)
		for _, r := range batch {
			appendPtr(bs[0], r.g)
			types.AppendDatum(bs[1], types.Int64T, types.DInt(r.id))
			appendPtr(bs[2], r.v)
			if r.w == nil {
				bs[3].AppendNull()
			} else {
				types.AppendDatum(bs[3], types.TextT, types.DText(*r.w))
			}
		}
		b := NewBatch(buildRecord(SchemaOf(topNTypes), bs, len(batch)), ops)
		releaseBuilders(bs)
		if err := op.OnBatch(context.Background(), b, collect); err != nil {
			t.Fatal(err)
		}
		if rng.Intn(3) > 0 {
			continue
		}
		epoch++
		before := maps.Clone(out)
		epochOps = epochOps[:0]
		if err := op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: epoch}, collect); err != nil {
			t.Fatalf("%s: epoch %d: %v", c, epoch, err)
		}
		want := expectTopN(c, rows)
		if !maps.Equal(out, want) {
			t.Fatalf("%s: epoch %d: output\n%s\nwant\n%s\nchanges:\n%s", c, epoch,
				sortedValues(out), sortedValues(want), strings.Join(epochOps, "\n"))
		}
		changed := map[int64]bool{}
		for _, s := range epochOps {
			var id int64
			fmt.Sscanf(strings.Fields(s)[2], "%d", &id)
			changed[id] = true
		}
		for id := range changed {
			if before[id] == out[id] {
				t.Fatalf("%s: epoch %d: changes of id %d are not net:\n%s", c, epoch, id, strings.Join(epochOps, "\n"))
			}
		}
		if c.cacheGroups > 0 && len(op.groups) > c.cacheGroups {
			t.Fatalf("%s: %d groups cached, limit %d", c, len(op.groups), c.cacheGroups)
		}
		if c.cacheBytes > 0 && spec.CachePool.Used() > c.cacheBytes {
			t.Fatalf("%s: %d bytes cached, share %d", c, spec.CachePool.Used(), c.cacheBytes)
		}
		switch rng.Intn(6) {
		case 0, 1, 2:
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			committedRows, committedOut = maps.Clone(rows), maps.Clone(out)
		case 3:
			// Restart right after a commit: the state is all there.
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			committedRows, committedOut = maps.Clone(rows), maps.Clone(out)
			start()
		case 4:
			// Crash: the uncommitted epochs are lost, for the input and the
			// output alike.
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			store = open()
			rows, out = maps.Clone(committedRows), maps.Clone(committedOut)
			start()
		}
	}
}

func appendPtr(b array.Builder, p *int64) {
	if p == nil {
		b.AppendNull()
		return
	}
	types.AppendDatum(b, types.Int64T, types.DInt(*p))
}

func sortedValues(m map[int64]string) string {
	return strings.Join(slices.Sorted(maps.Values(m)), "\n")
}

// TestTopNSequence checks a batch TopN (insert-only input, no stream key):
// peers are ordered by arrival, and the output comes at the final barrier.
func TestTopNSequence(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := randomTopNCase(rng)
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		store, err := state.Open(state.MemoryDir, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		spec := TopNSpec{Types: topNTypes, Keys: c.keys, Sequence: true, Offset: c.offset, Limit: c.limit,
			Kind: c.kind, RankCol: c.rankCol, Table: store.Table(1), CacheGroups: c.cacheGroups}
		if c.group {
			spec.GroupCols = []int{0}
		}
		outTypes := topNTypes
		if c.rankCol {
			outTypes = append(slices.Clone(topNTypes), types.Int64T)
		}
		op := NewTopN(mem, spec)
		rows := map[int64]topNTestRow{}
		got := map[int64]string{}
		collect := OutputFunc(func(_ context.Context, m Message) error {
			defer m.Release()
			for i, s := range formatRows(m.Batch, outTypes, false) {
				if m.Batch.Ops[i] != Insert {
					return fmt.Errorf("batch TopN emitted %s", m.Batch.Ops[i])
				}
				got[m.Batch.Rec.Column(1).(interface{ Value(int) int64 }).Value(i)] = s
			}
			return nil
		})
		id := int64(0)
		for n := rng.Intn(8); n >= 0; n-- {
			bs := newBuilders(mem, topNTypes)
			k := rng.Intn(30)
			for j := 0; j < k; j++ {
				id++
				r := topNTestRow{id: id}
				if x := int64(rng.Intn(3)); x > 0 {
					r.g = &x
				}
				if x := int64(rng.Intn(3)); x > 0 {
					r.v = &x
				}
				rows[id] = r
				appendPtr(bs[0], r.g)
				types.AppendDatum(bs[1], types.Int64T, types.DInt(id))
				appendPtr(bs[2], r.v)
				bs[3].AppendNull()
			}
			if err := op.OnBatch(context.Background(), NewBatch(buildRecord(SchemaOf(topNTypes), bs, k), nil), collect); err != nil {
				t.Fatal(err)
			}
			releaseBuilders(bs)
		}
		if err := op.OnBarrier(context.Background(), finalBarrier, collect); err != nil {
			t.Fatal(err)
		}
		if want := expectTopN(c, rows); !maps.Equal(got, want) {
			t.Fatalf("seed %d %s: output\n%s\nwant\n%s", seed, c, sortedValues(got), sortedValues(want))
		}
		store.Close()
		mem.AssertSize(t, 0)
	}
}

// BenchmarkTopN measures inserts of random rows into a TopN (ORDER BY v DESC
// LIMIT 10 without groups, and LIMIT 1 per group as DISTINCT ON makes it)
// with a checkpoint every 64 batches, state in an in-memory store, on one
// core.
func BenchmarkTopN(b *testing.B) {
	b.Run("global/limit=10", func(b *testing.B) { benchTopN(b, 0, 10) })
	b.Run("groups=1000/limit=1", func(b *testing.B) { benchTopN(b, 1000, 1) })
	b.Run("groups=100000/limit=1", func(b *testing.B) { benchTopN(b, 100_000, 1) })
}

func benchTopN(b *testing.B, groups int64, limit int64) {
	mem := memory.DefaultAllocator
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ts := []types.T{types.Int64T, types.Int64T, types.Int64T} // g, id, v
	spec := TopNSpec{Types: ts, Keys: []ir.SortKey{{Column: 2, Desc: true, NullsFirst: true}},
		InputKey: []int{1}, Limit: limit, Table: store.Table(1)}
	if groups > 0 {
		spec.GroupCols = []int{0}
	}
	head := Chain([]Operator{NewTopN(mem, spec)}, discard)
	rng := rand.New(rand.NewSource(1))
	ctx := context.Background()
	epoch := uint64(0)
	id := int64(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		bs := newBuilders(mem, ts)
		for j := 0; j < benchRows; j++ {
			id++
			g := int64(0)
			if groups > 0 {
				g = rng.Int63n(groups)
			}
			bs[0].(*array.Int64Builder).Append(g)
			bs[1].(*array.Int64Builder).Append(id)
			bs[2].(*array.Int64Builder).Append(rng.Int63n(1 << 40))
		}
		rec := buildRecord(SchemaOf(ts), bs, benchRows)
		releaseBuilders(bs)
		b.StartTimer()
		if err := head.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			epoch++
			if err := head.Emit(ctx, Message{Barrier: &barrier.Barrier{Epoch: epoch}}); err != nil {
				b.Fatal(err)
			}
			if _, err := store.Commit(epoch); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}
