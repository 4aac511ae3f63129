//go:build cgo

package exec

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Rows of the session tests: partition g, id (the stream key), time ts,
// payload v.
var sessionTypes = []types.T{types.Int64T, types.Int64T, types.TimestampT, types.Int64T}

type sessionTestRow struct {
	g, ts, v *int64
	id       int64
}

type sessionCase struct {
	// partition by g; partition2: by g and v.
	partition, partition2, keepNulls, watermark bool
	gap                                         int64
}

func (c sessionCase) String() string {
	return fmt.Sprintf("partition=%v,%v keepNulls=%v watermark=%v gap=%d", c.partition, c.partition2, c.keepNulls, c.watermark, c.gap)
}

// partitionOf returns r's partition in c.
func (c sessionCase) partitionOf(r sessionTestRow) string {
	switch {
	case c.partition2:
		return ptrString(r.g) + " " + ptrString(r.v)
	case c.partition:
		return ptrString(r.g)
	}
	return ""
}

func (c sessionCase) partitionCols() []int {
	switch {
	case c.partition2:
		return []int{0, 3}
	case c.partition:
		return []int{0}
	}
	return nil
}

const second = 1_000_000

var sessionSeeds = flag.Int("session-seeds", 64, "seeds of TestSessionWindowRandom")

// expectSessions computes, by brute force, the output row of every row of
// rows: its values and the bounds of its session, keyed by id.
func expectSessions(c sessionCase, rows map[int64]sessionTestRow) map[int64]string {
	parts := map[string][]sessionTestRow{}
	out := map[int64]string{}
	for _, r := range rows {
		if r.ts == nil {
			if c.keepNulls {
				out[r.id] = sessionRowString(r, nil, nil)
			}
			continue
		}
		g := c.partitionOf(r)
		parts[g] = append(parts[g], r)
	}
	for _, rs := range parts {
		sort.Slice(rs, func(i, j int) bool { return *rs[i].ts < *rs[j].ts })
		for i := 0; i < len(rs); {
			j := i + 1
			for j < len(rs) && *rs[j].ts-*rs[j-1].ts < c.gap {
				j++
			}
			start, end := *rs[i].ts, *rs[j-1].ts+c.gap
			for _, r := range rs[i:j] {
				out[r.id] = sessionRowString(r, &start, &end)
			}
			i = j
		}
	}
	return out
}

func ptrString(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

func tsString(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return types.DInt(*p).Text(types.TimestampT)
}

// sessionRowString formats a row with its bounds as formatRows does.
func sessionRowString(r sessionTestRow, start, end *int64) string {
	return strings.Join([]string{ptrString(r.g), fmt.Sprint(r.id), tsString(r.ts), ptrString(r.v), tsString(start), tsString(end)}, " ")
}

func sessionBatch(mem memory.Allocator, rows []sessionTestRow, ops []Op) *Batch {
	bs := newBuilders(mem, sessionTypes)
	defer releaseBuilders(bs)
	for _, r := range rows {
		appendPtr(bs[0], r.g)
		types.AppendDatum(bs[1], types.Int64T, types.DInt(r.id))
		if r.ts == nil {
			bs[2].AppendNull()
		} else {
			types.AppendDatum(bs[2], types.TimestampT, types.DInt(*r.ts))
		}
		appendPtr(bs[3], r.v)
	}
	return NewBatch(buildRecord(SchemaOf(sessionTypes), bs, len(rows)), ops)
}

// TestSessionWindowRandom checks the operator against a brute-force
// recomputation of every row's session after each barrier, over random
// inserts, deletes and updates with a small gap (many merges and splits),
// with commits, restarts and crashes; with a watermark, it also checks that
// late rows are dropped, that final sessions leave the state and that no row
// is emitted below the output watermark.
func TestSessionWindowRandom(t *testing.T) {
	for seed := int64(1); seed <= int64(*sessionSeeds); seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := sessionCase{partition: rng.Intn(2) == 0, partition2: rng.Intn(5) == 0, keepNulls: rng.Intn(3) == 0,
			watermark: rng.Intn(2) == 0, gap: int64(1+rng.Intn(4)) * second}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runSessionRandom(t, rng, c) })
	}
}

func runSessionRandom(t *testing.T, rng *rand.Rand, c sessionCase) {
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
	var late atomic.Int64
	spec := SessionWindowSpec{Types: sessionTypes, TimeCol: 2, Gap: c.gap, KeepNulls: c.keepNulls,
		InputKey: []int{1}, LateRows: &late, PartitionCols: c.partitionCols()}
	outTypes := append(slices.Clone(sessionTypes), types.TimestampT, types.TimestampT)
	var op *SessionWindow
	start := func() {
		if op != nil {
			op.Close()
		}
		spec.Table = store.Table(1)
		if c.watermark {
			spec.Index, spec.Watermark = store.Table(2), store.Table(3)
		}
		var err error
		if op, err = NewSessionWindow(mem, spec); err != nil {
			t.Fatal(err)
		}
	}
	start()
	defer func() { op.Close() }()

	// table is the input relation; accepted the rows the operator took
	// (late changes are not applied to it); out the operator's output.
	table := map[int64]sessionTestRow{}
	accepted := map[int64]sessionTestRow{}
	out := map[int64]string{}
	var wm, outWM int64 = -1 << 62, -1 << 62
	committed := func() func() {
		ct, ca, co, cw, cow := maps.Clone(table), maps.Clone(accepted), maps.Clone(out), wm, outWM
		return func() { table, accepted, out, wm, outWM = maps.Clone(ct), maps.Clone(ca), maps.Clone(co), cw, cow }
	}
	restore := committed()
	var epochOps []string
	collect := OutputFunc(func(_ context.Context, m Message) error {
		if m.Watermark != nil {
			if m.Watermark.Column != 5 {
				return fmt.Errorf("watermark on column %d", m.Watermark.Column)
			}
			if m.Watermark.Value < outWM {
				return fmt.Errorf("output watermark went back from %d to %d", outWM, m.Watermark.Value)
			}
			outWM = m.Watermark.Value
			return nil
		}
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		ends := m.Batch.Rec.Column(5).(*array.Timestamp)
		for i, s := range formatRows(m.Batch, outTypes, false) {
			o := m.Batch.Ops[i]
			id := m.Batch.Rec.Column(1).(*array.Int64).Value(i)
			epochOps = append(epochOps, fmt.Sprintf("%s %s", o, s))
			if ends.IsValid(i) && int64(ends.Value(i)) < outWM {
				return fmt.Errorf("%s %s: window_end below the output watermark %d", o, s, outWM)
			}
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
		if rng.Intn(6) == 0 {
			return nil
		}
		v := int64(rng.Intn(n))
		return &v
	}
	// Times advance slowly, so that late rows and final sessions come and go.
	clock := int64(0)
	newTS := func() *int64 {
		if rng.Intn(8) == 0 {
			return nil
		}
		v := (clock + int64(rng.Intn(16)) - 6) * second / 2
		if rng.Intn(3) == 0 {
			// Off the grid by a microsecond or two: bounds just past the
			// watermark.
			v += int64(1 + rng.Intn(2))
		}
		return &v
	}
	isLate := func(r sessionTestRow) bool { return c.watermark && r.ts != nil && *r.ts < wm }
	nextID := int64(0)
	epoch := uint64(0)
	defer func() {
		if testing.Verbose() {
			t.Logf("%s: late %d, accepted %d, table %d, wm %d, outWM %d", c, late.Load(), len(accepted), len(table), wm, outWM)
		}
	}()
	for step := 0; step < 200; step++ {
		var batch []sessionTestRow
		var ops []Op
		for n := 1 + rng.Intn(5); n > 0; n-- {
			ids := slices.Sorted(maps.Keys(table))
			r := sessionTestRow{}
			if len(ids) > 0 {
				r = table[ids[rng.Intn(len(ids))]]
			}
			switch x := rng.Intn(10); {
			case x < 3 && len(ids) > 0:
				delete(table, r.id)
				if !isLate(r) {
					delete(accepted, r.id)
				}
				batch, ops = append(batch, r), append(ops, Delete)
			case x < 6 && len(ids) > 0 && !isLate(r):
				nr := r
				switch rng.Intn(4) {
				case 0:
					nr.v = small(3)
				case 1:
					nr.g = small(3)
				default:
					nr.ts = newTS()
				}
				table[r.id] = nr
				delete(accepted, r.id)
				if !isLate(nr) {
					accepted[r.id] = nr
				}
				batch, ops = append(batch, r, nr), append(ops, UpdateDelete, UpdateInsert)
			default:
				nextID++
				nr := sessionTestRow{id: nextID, g: small(3), ts: newTS(), v: small(3)}
				table[nr.id] = nr
				if !isLate(nr) {
					accepted[nr.id] = nr
				}
				batch, ops = append(batch, nr), append(ops, Insert)
			}
		}
		if err := op.OnBatch(context.Background(), sessionBatch(mem, batch, ops), collect); err != nil {
			t.Fatal(err)
		}
		if rng.Intn(3) > 0 {
			continue
		}
		clock++
		if c.watermark && rng.Intn(2) == 0 {
			// The watermark trails the clock; sent just before the barrier.
			if w := (clock - 8) * second / 2; w > wm {
				wm = w
			}
			if err := op.OnWatermark(context.Background(), &barrier.Watermark{Column: 2, Value: wm}, collect); err != nil {
				t.Fatal(err)
			}
		}
		epoch++
		before := maps.Clone(out)
		epochOps = epochOps[:0]
		if err := op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: epoch}, collect); err != nil {
			t.Fatalf("%s: epoch %d: %v", c, epoch, err)
		}
		want := expectSessions(c, accepted)
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
		if c.watermark {
			checkSessionState(t, c, spec, accepted, wm, epoch)
		}
		switch x := rng.Intn(6); {
		case x <= 2:
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			restore = committed()
		case x == 3:
			// Restart right after a commit: the state is all there.
			if _, err := store.Commit(epoch); err != nil {
				t.Fatal(err)
			}
			restore = committed()
			start()
		case x == 4:
			// Crash: the uncommitted epochs are lost, for the input and the
			// output alike.
			op.Close()
			op = nil
			if err := store.Close(); err != nil {
				t.Fatal(err)
			}
			store = open()
			restore()
			start()
		}
	}
}

// checkSessionState checks that the operator's rows are exactly the
// accepted rows with a time whose session is not final (window_end > wm),
// and its index one key per such session.
func checkSessionState(t *testing.T, c sessionCase, spec SessionWindowSpec, accepted map[int64]sessionTestRow, wm int64, epoch uint64) {
	t.Helper()
	cc := c
	cc.keepNulls = false
	rows, sessions := 0, map[string]bool{}
	for id, s := range expectSessions(cc, accepted) {
		f := strings.Fields(s)
		d, err := types.ParseText(types.TimestampT, f[len(f)-2]+" "+f[len(f)-1])
		if err != nil {
			t.Fatal(err)
		}
		if d.I > wm {
			rows++
			sessions[c.partitionOf(accepted[id])+" "+f[len(f)-2]+" "+f[len(f)-1]] = true
		}
	}
	if n := countKeys(t, spec.Table); n != rows {
		t.Fatalf("%s: epoch %d: %d rows in state, want %d (watermark %d)", c, epoch, n, rows, wm)
	}
	if n := countKeys(t, spec.Index); n != len(sessions) {
		t.Fatalf("%s: epoch %d: %d sessions in the index, want %d (watermark %d)", c, epoch, n, len(sessions), wm)
	}
}

func countKeys(t *testing.T, table *state.Table) int {
	it, err := table.NewIter(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	return n
}

// TestSessionWindowSequence checks the batch form (insert-only input, no
// stream key): one final barrier emits every row with its session.
func TestSessionWindowSequence(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := sessionCase{partition: rng.Intn(2) == 0, partition2: rng.Intn(4) == 0, keepNulls: rng.Intn(2) == 0,
			gap: int64(1+rng.Intn(4)) * second}
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		store, err := state.Open(state.MemoryDir, state.Options{})
		if err != nil {
			t.Fatal(err)
		}
		spec := SessionWindowSpec{Types: sessionTypes, TimeCol: 2, Gap: c.gap, KeepNulls: c.keepNulls,
			Sequence: true, Table: store.Table(1), PartitionCols: c.partitionCols()}
		op, err := NewSessionWindow(mem, spec)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[int64]sessionTestRow{}
		for b := 0; b < 1+rng.Intn(4); b++ {
			var batch []sessionTestRow
			for n := rng.Intn(300); n > 0; n-- {
				r := sessionTestRow{id: int64(len(rows) + 1)}
				if rng.Intn(8) > 0 {
					v := int64(rng.Intn(200)) * second / 2
					r.ts = &v
				}
				if rng.Intn(5) > 0 {
					g := int64(rng.Intn(3))
					r.g = &g
				}
				if rng.Intn(3) > 0 {
					v := int64(rng.Intn(2))
					r.v = &v
				}
				rows[r.id] = r
				batch = append(batch, r)
			}
			if err := op.OnBatch(context.Background(), sessionBatch(mem, batch, make([]Op, len(batch))), nil); err != nil {
				t.Fatal(err)
			}
		}
		outTypes := append(slices.Clone(sessionTypes), types.TimestampT, types.TimestampT)
		got := map[int64]string{}
		err = op.OnBarrier(context.Background(), finalBarrier, OutputFunc(func(_ context.Context, m Message) error {
			if m.Batch == nil {
				return nil
			}
			defer m.Batch.Release()
			for i, s := range formatRows(m.Batch, outTypes, false) {
				if m.Batch.Ops[i] != Insert {
					return fmt.Errorf("%s %s in a batch query", m.Batch.Ops[i], s)
				}
				got[m.Batch.Rec.Column(1).(*array.Int64).Value(i)] = s
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if want := expectSessions(c, rows); !maps.Equal(got, want) {
			t.Fatalf("seed %d %s: output\n%s\nwant\n%s", seed, c, sortedValues(got), sortedValues(want))
		}
		op.Close()
		store.Close()
		mem.AssertSize(t, 0)
	}
}

// BenchmarkSessionWindow feeds epochs of BatchSize inserts into 1000
// partitions whose sessions go on (each row extends its partition's last
// session, so the rows of an epoch are re-emitted at the next), with a
// watermark that makes sessions final as time passes.
func BenchmarkSessionWindow(b *testing.B) {
	mem := memory.NewGoAllocator()
	store, err := state.Open(state.MemoryDir, state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	var late atomic.Int64
	op, err := NewSessionWindow(mem, SessionWindowSpec{Types: sessionTypes, TimeCol: 2, Gap: 10 * second,
		PartitionCols: []int{0}, InputKey: []int{1}, Table: store.Table(1), Index: store.Table(2),
		Watermark: store.Table(3), LateRows: &late})
	if err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	discard := OutputFunc(func(_ context.Context, m Message) error { m.Release(); return nil })
	rng := rand.New(rand.NewSource(1))
	rows := make([]sessionTestRow, BatchSize)
	id := int64(0)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for i := range rows {
			id++
			g, ts, v := int64(rng.Intn(1000)), id*second/100, id
			rows[i] = sessionTestRow{id: id, g: &g, ts: &ts, v: &v}
		}
		if err := op.OnBatch(context.Background(), sessionBatch(mem, rows, make([]Op, len(rows))), discard); err != nil {
			b.Fatal(err)
		}
		w := &barrier.Watermark{Column: 2, Value: id*second/100 - 60*second}
		if err := op.OnWatermark(context.Background(), w, discard); err != nil {
			b.Fatal(err)
		}
		if err := op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: uint64(n + 1)}, discard); err != nil {
			b.Fatal(err)
		}
		if _, err := store.Commit(uint64(n + 1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*BatchSize), "ns/row")
}
