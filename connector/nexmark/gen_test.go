package nexmark

import (
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func gen(t testing.TB, opts map[string]string) *Generator {
	t.Helper()
	cfg, err := ParseOptions(opts)
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// rows returns every row of every split of g as text lines keyed by event
// id.
func rows(t *testing.T, mem memory.Allocator, g *Generator, chunk int64) map[int64]string {
	out := map[int64]string{}
	for s := 0; s < g.Splits(); s++ {
		total := g.SplitRows(s)
		for first := int64(0); first < total; first += chunk {
			rec := g.Batch(mem, s, first, chunk)
			ids := rec.Column(int(rec.NumCols()) - 1).(*array.Int64)
			for i := 0; i < int(rec.NumRows()); i++ {
				var b strings.Builder
				for c := 0; c < int(rec.NumCols())-1; c++ {
					b.WriteString(rec.Column(c).ValueStr(i))
					b.WriteByte('|')
				}
				if _, dup := out[ids.Value(i)]; dup {
					t.Fatalf("event %d twice", ids.Value(i))
				}
				out[ids.Value(i)] = b.String()
			}
			rec.Release()
		}
	}
	return out
}

// TestSplitsShareOneTimeline checks that any number of splits and any
// chunk size produce the same rows, each once.
func TestSplitsShareOneTimeline(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, table := range []string{"person", "auction", "bid", ""} {
		opts := map[string]string{"nexmark.event.num": "1237"}
		if table != "" {
			opts["nexmark.table.type"] = table
		}
		want := rows(t, mem, gen(t, opts), 1000)
		for _, k := range []string{"2", "3", "7", "50", "64"} {
			opts["nexmark.split.num"] = k
			got := rows(t, mem, gen(t, opts), 17)
			if len(got) != len(want) {
				t.Fatalf("%s with %s splits: %d rows, want %d", table, k, len(got), len(want))
			}
			for id, r := range want {
				if got[id] != r {
					t.Fatalf("%s with %s splits: event %d is %s, want %s", table, k, id, got[id], r)
				}
			}
		}
		delete(opts, "nexmark.split.num")
		var wantRows int
		for n := int64(0); n < 1237; n++ {
			if table == "" || kindOf(n).String() == table {
				wantRows++
			}
		}
		if len(want) != wantRows {
			t.Fatalf("%s: %d rows, want %d", table, len(want), wantRows)
		}
	}
}

// TestEventRules checks the generated values against the rules of
// docs (ids, hot values, ranges, times).
func TestEventRules(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const events = 100_000
	base := time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC).UnixMicro()

	b := gen(t, map[string]string{"nexmark.table.type": "bid", "nexmark.event.num": "100000"})
	rec := b.Batch(mem, 0, 0, events)
	defer rec.Release()
	if rec.NumRows() != events/50*46 {
		t.Fatalf("%d bids", rec.NumRows())
	}
	auction, bidder, price := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Int64)
	channel, url, ts, extra := rec.Column(3).(*array.String), rec.Column(4).(*array.String), rec.Column(5).(*array.Timestamp), rec.Column(6).(*array.String)
	ids := rec.Column(7).(*array.Int64)
	var hotAuction, hotBidder, hotChannel, withID, extraBytes int
	for i := 0; i < int(rec.NumRows()); i++ {
		n := ids.Value(i)
		if k := kindOf(n); k != Bid {
			t.Fatalf("event %d is a %s", n, k)
		}
		last := 3*(n/50) + 2
		if a := auction.Value(i) - 1000; a == last/100*100 {
			hotAuction++
		} else if a < max(last-100, 0) || a > last+10 {
			t.Fatalf("event %d: auction %d outside [%d, %d]", n, a, last-100, last+10)
		}
		if bidder.Value(i)-1000 == n/50/100*100+1 {
			hotBidder++
		}
		if p := price.Value(i); p < 100 || p > 100_000_000 {
			t.Fatalf("price %d", p)
		}
		if want := base + n/10*1000; int64(ts.Value(i)) != want {
			t.Fatalf("event %d at %d, want %d", n, ts.Value(i), want)
		}
		switch c := channel.Value(i); c {
		case "Google", "Facebook", "Baidu", "Apple":
			hotChannel++
		default:
			if !strings.HasPrefix(c, "channel-") {
				t.Fatalf("channel %q", c)
			}
			if strings.Contains(url.Value(i), "&channel_id=") {
				withID++
			}
		}
		if !strings.HasPrefix(url.Value(i), "https://www.nexmark.com/") || !strings.Contains(url.Value(i), "/item.htm?query=1") {
			t.Fatalf("url %q", url.Value(i))
		}
		extraBytes += len(extra.Value(i)) + len(channel.Value(i)) + len(url.Value(i)) + 32
	}
	rows := int(rec.NumRows())
	near := func(what string, got, want float64) {
		if got < want*0.95 || got > want*1.05 {
			t.Errorf("%s: %.3f, want about %.3f", what, got, want)
		}
	}
	near("hot auctions", float64(hotAuction)/float64(rows), 0.5)
	near("hot bidders", float64(hotBidder)/float64(rows), 0.75)
	near("hot channels", float64(hotChannel)/float64(rows), 0.5)
	near("channel ids", float64(withID)/float64(rows-hotChannel), 0.9)
	// Bids with long URLs are larger than the average without padding.
	if size := float64(extraBytes) / float64(rows); size < 100 || size > 120 {
		t.Errorf("bid size %.1f, want 100 to 120", size)
	}

	a := gen(t, map[string]string{"nexmark.table.type": "auction", "nexmark.event.num": "100000"})
	arec := a.Batch(mem, 0, 0, events)
	defer arec.Release()
	aid, initial, reserve := arec.Column(0).(*array.Int64), arec.Column(3).(*array.Int64), arec.Column(4).(*array.Int64)
	dt, expires, seller, category := arec.Column(5).(*array.Timestamp), arec.Column(6).(*array.Timestamp), arec.Column(7).(*array.Int64), arec.Column(8).(*array.Int64)
	aids := arec.Column(10).(*array.Int64)
	for i := 0; i < int(arec.NumRows()); i++ {
		n := aids.Value(i)
		if want := 3*(n/50) + n%50 - 1 + 1000; aid.Value(i) != want {
			t.Fatalf("event %d: auction id %d, want %d", n, aid.Value(i), want)
		}
		if i > 0 && aid.Value(i) != aid.Value(i-1)+1 {
			t.Fatalf("auction ids not consecutive at %d", i)
		}
		if reserve.Value(i) <= initial.Value(i) {
			t.Fatalf("reserve %d <= initial %d", reserve.Value(i), initial.Value(i))
		}
		// The horizon is 1666 events: 166.6 ms at 10,000 events/s.
		if d := int64(expires.Value(i) - dt.Value(i)); d < 1000 || d > 2*167*1000 {
			t.Fatalf("auction length %d us", d)
		}
		if c := category.Value(i); c < 10 || c > 14 {
			t.Fatalf("category %d", c)
		}
		if s := seller.Value(i) - 1000; s > n/50+10 {
			t.Fatalf("seller %d after the last person %d", s, n/50)
		}
	}

	p := gen(t, map[string]string{"nexmark.table.type": "person", "nexmark.event.num": "100000"})
	prec := p.Batch(mem, 0, 0, events)
	defer prec.Release()
	var size int
	for i := 0; i < int(prec.NumRows()); i++ {
		if got := prec.Column(0).(*array.Int64).Value(i); got != int64(1000+i) {
			t.Fatalf("person %d has id %d", i, got)
		}
		switch s := prec.Column(5).(*array.String).Value(i); s {
		case "az", "ca", "id", "or", "wa", "wy":
		default:
			t.Fatalf("state %q", s)
		}
		for c := 1; c <= 5; c++ {
			size += len(prec.Column(c).(*array.String).Value(i))
		}
		size += 16 + len(prec.Column(7).(*array.String).Value(i))
	}
	near("person size", float64(size)/float64(prec.NumRows()), 200)
}

// TestCombined checks the combined form: each row's struct of its kind is
// set and equal to the row of the single-kind source.
func TestCombined(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	all := gen(t, map[string]string{"nexmark.event.num": "500"})
	rec := all.Batch(mem, 0, 0, 500)
	defer rec.Release()
	bids := gen(t, map[string]string{"nexmark.table.type": "bid"})
	brec := bids.Batch(mem, 0, 0, 460)
	defer brec.Release()
	et := rec.Column(0).(*array.Int64)
	bid := rec.Column(3).(*array.Struct)
	j := 0
	for i := 0; i < 500; i++ {
		want := map[int64]int64{0: 0, 1: 1, 2: 1, 3: 1}[int64(i%50)]
		if i%50 >= 4 {
			want = 2
		}
		if et.Value(i) != want {
			t.Fatalf("event %d: type %d, want %d", i, et.Value(i), want)
		}
		for k := 1; k <= 3; k++ {
			if rec.Column(k).IsNull(i) != (int64(k-1) != want) {
				t.Fatalf("event %d: struct %d null: %v", i, k, rec.Column(k).IsNull(i))
			}
		}
		if want == 2 {
			for f := 0; f < bid.NumField(); f++ {
				if got, exp := bid.Field(f).ValueStr(i), brec.Column(f).ValueStr(j); got != exp {
					t.Fatalf("event %d field %d: %s, want %s", i, f, got, exp)
				}
			}
			j++
		}
		if rec.Column(4).(*array.Timestamp).Value(i) != arrow.Timestamp(all.timestampUs(int64(i))) {
			t.Fatalf("event %d: date_time", i)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, bad := range []map[string]string{
		{"nexmark.table.type": "Bids"},
		{"nexmark.event.num": "-1"},
		{"nexmark.split.num": "0"},
		{"nexmark.max.chunk.size": "x"},
		{"nexmark.bogus": "1"},
		{"nexmark.base.time": "yesterday"},
	} {
		if _, err := ParseOptions(bad); err == nil || !strings.Contains(err.Error(), "nexmark") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	c, err := ParseOptions(map[string]string{"nexmark.table.type": "Bid", "nexmark.base.time": "2020-01-01 00:00:00"})
	if err != nil || c.Table != Bid || c.BaseTimeMs != time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() {
		t.Fatalf("%+v %v", c, err)
	}
}

// BenchmarkGenerate reports events per second of each table type.
func BenchmarkGenerate(b *testing.B) {
	for _, table := range []string{"bid", "auction", "person", ""} {
		name := table
		if name == "" {
			name = "combined"
		}
		b.Run(name, func(b *testing.B) {
			opts := map[string]string{}
			if table != "" {
				opts["nexmark.table.type"] = table
			}
			g := gen(b, opts)
			mem := memory.NewGoAllocator()
			b.ReportAllocs()
			var rows int64
			for i := 0; i < b.N; i++ {
				rec := g.Batch(mem, 0, int64(i)*1024, 1024)
				rows += rec.NumRows()
				rec.Release()
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestGolden pins the generated events: a source's position is a row
// number, so a change to the values would make a restarted reader replay
// different rows than it first sent. Change the sums only with a format
// change that old checkpoints cannot meet.
func TestGolden(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for table := range golden {
		opts := map[string]string{"nexmark.event.num": "5000"}
		if table != "" {
			opts["nexmark.table.type"] = table
		}
		g := gen(t, opts)
		rec := g.Batch(mem, 0, 0, 5000)
		h := fnv.New64a()
		for c := 0; c < int(rec.NumCols()); c++ {
			for i := 0; i < int(rec.NumRows()); i++ {
				h.Write([]byte(rec.Column(c).ValueStr(i)))
				h.Write([]byte{0})
			}
		}
		rec.Release()
		if got := h.Sum64(); got != golden[table] {
			t.Errorf("%q: events hash to %#x, want %#x", table, got, golden[table])
		}
	}
}

var golden = map[string]uint64{"person": 0x35bb072264ec4d12, "auction": 0x3827ac1a7c0403d1, "bid": 0x4a2956d03fc59792, "": 0x5c89a612898a1777}

// TestNoAllocationPerRow checks that a batch's allocations do not grow with
// its rows (builders and buffers are per column, not per row).
func TestNoAllocationPerRow(t *testing.T) {
	for _, table := range []string{"bid", "auction", "person", ""} {
		opts := map[string]string{}
		if table != "" {
			opts["nexmark.table.type"] = table
		}
		g := gen(t, opts)
		mem := memory.NewGoAllocator()
		allocs := func(rows int64) float64 {
			return testing.AllocsPerRun(5, func() { g.Batch(mem, 0, 0, rows).Release() })
		}
		small, large := allocs(256), allocs(4096)
		if large > small*1.5+10 {
			t.Errorf("%q: %.0f allocations for 256 rows, %.0f for 4096", table, small, large)
		}
	}
}
