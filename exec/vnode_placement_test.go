//go:build cgo

package exec

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// placementKey is a partition key: its columns' SQL types and, per column,
// values (PostgreSQL text) the rows cycle through. Equal values spelled
// differently ('1 day' and '24 hours', 0 and -0, 1.0 and 1.00) are there
// on purpose: the exchange sends them to one actor.
type placementKey struct {
	name string
	sql  []string
	vals [][]string
}

var placementKeys = []placementKey{
	{"bigint", []string{"bigint"}, [][]string{{"1", "-1", "0", "42", "7", "9223372036854775807", "-9223372036854775808", "1000", "12", "-5"}}},
	{"text", []string{"text"}, [][]string{{"", "a", "b", "ab", "é", "a b", "zz", "hello", "x\ty", "A"}}},
	{"interval", []string{"interval"}, [][]string{{"1 day", "24 hours", "1 mon", "30 days", "-1 day", "1 hour", "00:00:00",
		"2 days", "48 hours", "1 year", "12 mons", "90 minutes", "1 day 02:00:00", "26 hours"}}},
	{"double", []string{"double precision"}, [][]string{{"0", "-0", "1.5", "-2.25", "NaN", "Infinity", "-Infinity", "1e300", "3", "0.1"}}},
	{"numeric", []string{"numeric"}, [][]string{{"1", "1.0", "1.00", "2.5", "2.50", "-0", "0.000", "3.14159", "-7.5", "-7.50",
		"12345678901234567890.5", "100", "1e2", "0.001"}}},
	{"composite", []string{"text", "interval", "bigint"}, [][]string{{"a", "b", ""}, {"1 day", "24 hours", "1 mon", "30 days"}, {"1", "2"}}},
	{"composite_numeric", []string{"text", "numeric", "double precision"}, [][]string{{"a", "b", ""}, {"1", "1.0", "2.50", "-0"}, {"0", "-0", "NaN"}}},
}

// placementOp is a vnode-partitioned operator: a view whose state is that
// operator's. {K} is the key column list (k0, k1, ...), {EQ} the join
// condition a.k0 = b.k0 AND .... window says the partition key starts
// with the row's TUMBLE window_start (10 seconds): the planner puts it
// first.
type placementOp struct {
	name   string
	query  string
	join   bool // reads t and u, each partitioned by its key
	window bool
}

var placementOps = []placementOp{
	{name: "hash_agg", query: "SELECT {K}, count(*) AS n, sum(v) AS s, min(v) AS lo FROM t GROUP BY {K}"},
	{name: "top_n", query: "SELECT DISTINCT ON ({K}) {K}, id, v FROM t ORDER BY {K}, v DESC, id"},
	{name: "over_window", query: "SELECT id, {K}, v, sum(v) OVER (PARTITION BY {K} ORDER BY v, id) AS s FROM t"},
	{name: "session_window", query: "SELECT id, {K}, ts, window_start, window_end FROM SESSION(t, ts, INTERVAL '5 seconds', {K})"},
	{name: "hash_join", query: "SELECT a.id, b.id AS bid FROM t a JOIN u b ON {EQ}", join: true},
	{name: "left_join", query: "SELECT a.id, b.id AS bid FROM t a LEFT JOIN u b ON {EQ}", join: true},
	{name: "asof_join", query: "SELECT a.id, b.id AS bid FROM t a ASOF LEFT JOIN u b ON {EQ} AND a.ts >= b.ts", join: true},
	{name: "interval_join", query: "SELECT a.id, b.id AS bid FROM t a JOIN u b ON {EQ} AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '10 seconds'", join: true},
	{name: "window_agg", window: true,
		query: "SELECT {K}, window_start, count(*) AS n, max(v) AS hi FROM TUMBLE(t, ts, INTERVAL '10 seconds') GROUP BY {K}, window_start"},
	{name: "window_top_n", window: true,
		query: "SELECT DISTINCT ON ({K}, window_start) {K}, window_start, id, v FROM TUMBLE(t, ts, INTERVAL '10 seconds') ORDER BY {K}, window_start, v DESC, id"},
}

const (
	placementActors = 3
	placementActor  = 1 // the actor under test: a strict sub-range
	windowMicros    = 10_000_000
	placementRows   = 60
)

// TestVNodePlacement checks that every vnode-partitioned operator keys its
// state by the virtual node the exchange routes the row by. Each operator,
// built as actor 1 of 3, gets only the rows the exchange (its partitioner)
// would send that actor: inserts, updates, deletes and a watermark. Every
// key of every state table must then carry a virtual node of the actor's
// range, and one the exchange computed for a row fed: an operator that
// hashed another encoding than the exchange would file a group under a
// virtual node another actor owns, scans and cleans.
func TestVNodePlacement(t *testing.T) {
	for _, op := range placementOps {
		for _, key := range placementKeys {
			t.Run(op.name+"/"+key.name, func(t *testing.T) { runVNodePlacement(t, op, key) })
		}
	}
}

func runVNodePlacement(t *testing.T, op placementOp, key placementKey) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	h := &dataflowHarness{t: t, mem: mem}
	defer func() {
		h.close()
		mem.AssertSize(t, 0)
	}()
	var cols, eq []string
	for i, s := range key.sql {
		cols = append(cols, fmt.Sprintf("k%d %s", i, s))
		eq = append(eq, fmt.Sprintf("a.k%d = b.k%d", i, i))
	}
	names := []string{"t"}
	if op.join {
		names = append(names, "u")
	}
	for _, name := range names {
		decl := fmt.Sprintf("%s (id bigint PRIMARY KEY, %s, v bigint, ts timestamp, WATERMARK FOR ts AS ts)", name, strings.Join(cols, ", "))
		if out := h.declareTable(t, decl); out != "ok" {
			t.Fatal(out)
		}
	}
	var keyList []string
	for i := range key.sql {
		keyList = append(keyList, fmt.Sprintf("k%d", i))
	}
	h.query = strings.NewReplacer("{K}", strings.Join(keyList, ", "), "{EQ}", strings.Join(eq, " AND ")).Replace(op.query)
	if err := buildOwning(h, state.OwnedVNodes(placementActor, placementActors)); err != nil {
		if op.name == "asof_join" && strings.Contains(fmt.Sprint(key.sql), "interval") && strings.Contains(err.Error(), "must be equalities") {
			t.Skipf("%s: %v", h.query, err) // interval equality is not an ASOF join key
		}
		t.Fatalf("%s: %v", h.query, err)
	}
	xts := exchangeKeyTypes(t, h)
	if xts == nil {
		t.Skipf("%s: not partitioned (no exchange by key)", h.query)
	}
	if got, want := fmt.Sprint(xts), fmt.Sprint(placementKeyTypes(h.inputs["t"], key, op.window)); got != want {
		if op.join && strings.Contains(want, "interval") {
			// Interval equality is a join filter, not a join key.
			t.Skipf("%s: the exchange partitions by %s", h.query, got)
		}
		t.Fatalf("%s: the exchange partitions by %s, the test by %s", h.query, got, want)
	}

	// The rows of each table the exchange sends actor 1, and the virtual
	// nodes of their partition keys.
	want := map[uint16]bool{}
	rows := map[string][][]types.Datum{}
	for _, name := range names {
		rel := h.inputs[name]
		all := placementTableRows(t, rel, key)
		owner, vnode := exchangeRoutes(t, mem, rel, key, op.window, all)
		for r, row := range all {
			if owner[r] == placementActor {
				rows[name] = append(rows[name], row)
				want[uint16(vnode[r])] = true
			}
		}
		if len(rows[name]) == 0 {
			t.Fatalf("no row of %s goes to actor %d", name, placementActor)
		}
	}

	owned := state.OwnedVNodes(placementActor, placementActors)
	for _, name := range names {
		placementEmit(t, h, name, rows[name], nil)
	}
	placementBarrier(t, h)
	if n := checkPlacement(t, h, owned, want); n == 0 {
		t.Fatalf("%s: no state after the inserts", h.query)
	}
	// Updates of the non-key column v, then deletes.
	for _, name := range names {
		var upd [][]types.Datum
		var ops []Op
		for _, row := range rows[name] {
			if row[0].I%2 == 0 {
				next := append([]types.Datum(nil), row...)
				next[len(next)-2] = types.DInt(row[len(row)-2].I + 100)
				upd = append(upd, row, next)
				ops = append(ops, UpdateDelete, UpdateInsert)
			}
		}
		placementEmit(t, h, name, upd, ops)
		var del [][]types.Datum
		ops = ops[:0]
		for _, row := range rows[name] {
			if row[0].I%5 == 1 {
				del = append(del, row)
				ops = append(ops, Delete)
			}
		}
		placementEmit(t, h, name, del, ops)
	}
	placementBarrier(t, h)
	checkPlacement(t, h, owned, want)
	// A watermark past half the rows: windowed state is cleaned.
	for _, name := range names {
		placementWatermark(t, h, name, placementTime(placementRows/2))
	}
	placementBarrier(t, h)
	checkPlacement(t, h, owned, want)
	if n := h.errs.Load(); n != 0 {
		t.Fatalf("%d evaluation errors", n)
	}
}

// buildOwning builds h's view as the harness does, its operators owning
// the virtual nodes vs.
func buildOwning(h *dataflowHarness, vs state.VNodes) error {
	parsed, err := sql.Parse("CREATE MATERIALIZED VIEW v AS " + h.query)
	if err != nil {
		return err
	}
	st, err := sql.Bind(h.cat, parsed[0])
	if err != nil {
		return err
	}
	cmv := st.(*ir.CreateMaterializedView)
	if h.plan, err = planner.PlanStreamWith(cmv.Query, planner.StreamOptions{}); err != nil {
		return err
	}
	env := Env{
		Mem:      h.mem,
		Eval:     &eval.Context{Mem: h.mem, Errors: &h.errs},
		LateRows: &h.late,
		Table:    func(slot int) *state.Table { return h.store.Table(state.TableID(101 + slot)) },
		VNodes:   vs,
	}
	h.df, err = BuildStream(env, h.plan, ViewStorage{Rows: h.store.Table(100)}, OutputFunc(func(_ context.Context, m Message) error {
		m.Release()
		return nil
	}))
	return err
}

// exchangeKeyTypes returns the key types of the exchanges by key from the
// scans of h's view when its fragments are cut for a parallel run, or nil
// if there are none.
func exchangeKeyTypes(t *testing.T, h *dataflowHarness) []types.T {
	parsed, err := sql.Parse("CREATE MATERIALIZED VIEW v AS " + h.query)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sql.Bind(h.cat, parsed[0])
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.PlanStreamWith(st.(*ir.CreateMaterializedView).Query, planner.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frags := planner.CutFragments(plan)
	if frags == nil {
		return nil // runs as one actor
	}
	var ts []types.T
	for _, x := range frags.Exchanges {
		if len(x.Keys) == 0 || x.From != 0 {
			continue // not into the operator from the scans
		}
		if ts != nil && fmt.Sprint(ts) != fmt.Sprint(x.KeyTypes) {
			t.Fatalf("%s: exchanges by %v and %v", h.query, ts, x.KeyTypes)
		}
		ts = x.KeyTypes
	}
	return ts
}

// placementKeyTypes returns the types of the partition key of rel's rows:
// window_start if window, then the key columns.
func placementKeyTypes(rel *catalog.Relation, key placementKey, window bool) []types.T {
	var kts []types.T
	if window {
		kts = append(kts, types.TimestampT)
	}
	return append(kts, rel.Types()[1:1+len(key.sql)]...)
}

// placementTime is the ts of row i: a second apart, so that windows and
// sessions hold several rows.
func placementTime(i int) int64 { return 1_700_000_000_000_000 + int64(i)*1_000_000 }

// placementTableRows returns the candidate rows (id, k..., v, ts) of rel.
func placementTableRows(t *testing.T, rel *catalog.Relation, key placementKey) [][]types.Datum {
	ts := rel.Types()
	var rows [][]types.Datum
	for i := 0; i < placementRows; i++ {
		row := []types.Datum{types.DInt(int64(i))}
		for c, vals := range key.vals {
			// Columns cycle at different strides: many combinations.
			d, err := types.ParseText(ts[1+c], vals[(i*(2*c+1)+c*c)%len(vals)])
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, d)
		}
		row = append(row, types.DInt(int64(i)), types.DInt(placementTime(i)))
		rows = append(rows, row)
	}
	return rows
}

// exchangeRoutes returns, for each row, the actor (of placementActors) the
// exchange sends it to and the virtual node it computes: the exchange's
// partitioner over the row's partition key (its window start if window,
// then its key columns).
func exchangeRoutes(t *testing.T, mem memory.Allocator, rel *catalog.Relation, key placementKey, window bool, rows [][]types.Datum) (owner, vnode []int32) {
	kts := placementKeyTypes(rel, key, window)
	first := len(kts) - len(key.sql)
	bs := newBuilders(mem, kts)
	defer releaseBuilders(bs)
	for _, row := range rows {
		if window {
			tm := row[len(row)-1].I
			types.AppendDatum(bs[0], types.TimestampT, types.DInt(tm-tm%windowMicros))
		}
		for c := range key.sql {
			types.AppendDatum(bs[first+c], kts[first+c], row[1+c])
		}
	}
	rec := buildRecord(SchemaOf(kts), bs, len(rows))
	defer rec.Release()
	keys := make([]int, len(kts))
	for i := range keys {
		keys[i] = i
	}
	p := newPartitioner(keys, kts, placementActors)
	owner = append(owner, p.owners(rec)...)
	// With one actor per virtual node, an actor is a virtual node.
	p = newPartitioner(keys, kts, state.VNodeCount)
	vnode = append(vnode, p.owners(rec)...)
	return owner, vnode
}

// placementEmit feeds rows of table name (inserts if ops is nil) to every
// scan of it.
func placementEmit(t *testing.T, h *dataflowHarness, name string, rows [][]types.Datum, ops []Op) {
	if len(rows) == 0 {
		return
	}
	rel := h.inputs[name]
	if ops == nil {
		ops = make([]Op, len(rows))
		for i := range ops {
			ops[i] = Insert
		}
	}
	for i, up := range h.plan.Upstreams {
		if up != rel {
			continue
		}
		ts := rel.Types()
		bs := newBuilders(h.mem, ts)
		for _, row := range rows {
			for c, d := range row {
				types.AppendDatum(bs[c], ts[c], d)
			}
		}
		b := NewBatch(buildRecord(SchemaOf(ts), bs, len(rows)), append([]Op(nil), ops...))
		releaseBuilders(bs)
		if err := h.df.Heads[i].Emit(context.Background(), Message{Batch: b}); err != nil {
			t.Fatal(err)
		}
	}
}

func placementWatermark(t *testing.T, h *dataflowHarness, name string, ts int64) {
	rel := h.inputs[name]
	for i, up := range h.plan.Upstreams {
		if up == rel {
			w := &barrier.Watermark{Column: rel.Watermark.Column, Value: ts}
			if err := h.df.Heads[i].Emit(context.Background(), Message{Watermark: w}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func placementBarrier(t *testing.T, h *dataflowHarness) {
	h.epoch++
	br := &barrier.Barrier{Epoch: h.epoch}
	for _, head := range h.df.Heads {
		if err := head.Emit(context.Background(), Message{Barrier: br}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.store.Commit(h.epoch); err != nil {
		t.Fatal(err)
	}
}

// checkPlacement scans every operator state table of h's view and checks
// that each key's virtual node is owned (in vs) and one the exchange
// computed for a row fed (in want). It returns the number of keys.
func checkPlacement(t *testing.T, h *dataflowHarness, vs state.VNodes, want map[uint16]bool) int {
	t.Helper()
	n, bad := 0, 0
	for slot := 0; slot < h.plan.Tables; slot++ {
		it, err := h.store.Table(state.TableID(101+slot)).NewIter(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if isWatermarkKey(k) {
				continue
			}
			n++
			if len(k) < state.VNodePrefixLen {
				t.Errorf("%s: table %d: key %x has no virtual node", h.query, slot, k)
				continue
			}
			v := state.KeyVNode(k)
			var what string
			switch {
			case !vs.Contains(v):
				what = fmt.Sprintf("outside the actor's %v", vs)
			case !want[v]:
				what = "which no row fed hashes to"
			default:
				continue
			}
			if bad++; bad <= 3 {
				t.Errorf("%s: table %d: key %x in virtual node %d, %s", h.query, slot, k, v, what)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d more keys misplaced", h.query, bad-3)
	}
	return n
}

// isWatermarkKey reports whether k is a key of an operator's watermark
// table (watermarkKey, sideWMKeys): one per operator, not vnode-keyed.
func isWatermarkKey(k []byte) bool {
	return bytes.Equal(k, watermarkKey) || bytes.Equal(k, sideWMKeys[0]) || bytes.Equal(k, sideWMKeys[1])
}
