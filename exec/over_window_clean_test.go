//go:build cgo

package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// cleanTestConfigs are windows that pass watermarks on o (frames ending at
// the current row or before), with the calls whose reach back cleaning
// must respect: carried running and ranking state, ROWS, GROUPS and RANGE
// offsets, lag, and running frames that end PRECEDING.
func cleanTestConfigs() map[string]*planner.Window {
	i64, num := types.Int64T, types.NumericT
	dflt := ir.DefaultFrame
	asc := []planner.WindowOrder{{Col: colO, T: types.Int32T}}
	lagDefault := withParam(wcall(ir.WinLag, colV, dflt, i64), 2)
	lagDefault.DefaultCol = colID
	part := func(calls ...planner.WindowCall) *planner.Window {
		return &planner.Window{
			PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
			Order: asc, Calls: calls, PassWatermarks: true,
		}
	}
	return map[string]*planner.Window{
		"running": part(
			wcall(ir.WinRowNumber, -1, dflt, i64),
			wcall(ir.WinRank, -1, dflt, i64),
			wcall(ir.WinDenseRank, -1, dflt, i64),
			wcall(ir.AggSum, colV, dflt, num),
			wcall(ir.AggCount, colV, frame(ir.FrameRows, unbPrec, curRow, 0), i64),
			wcall(ir.WinFirstValue, colV, dflt, i64),
			withParam(wcall(ir.WinNthValue, colV, dflt, i64), 3),
		),
		"bounded": part(
			wcall(ir.AggSum, colV, frame(ir.FrameRows, prec(intOff(3)), curRow, 0), num),
			wcall(ir.AggMin, colV, frame(ir.FrameRange, prec(intOff(2)), curRow, 0), i64),
			wcall(ir.AggMax, colV, frame(ir.FrameGroups, prec(intOff(1)), curRow, ir.ExcludeCurrentRow), i64),
			wcall(ir.AggCountStar, -1, frame(ir.FrameRows, prec(intOff(4)), prec(intOff(2)), 0), i64),
			wcall(ir.WinFirstValue, colV, frame(ir.FrameRows, prec(intOff(2)), curRow, 0), i64),
			lagDefault,
		),
		"preceding": part(
			wcall(ir.AggSum, colV, frame(ir.FrameGroups, unbPrec, prec(intOff(2)), 0), num),
			wcall(ir.AggMax, colV, frame(ir.FrameRange, unbPrec, prec(intOff(2)), 0), i64),
			wcall(ir.WinLastValue, colV, frame(ir.FrameRows, unbPrec, prec(intOff(1)), 0), i64),
			withParam(wcall(ir.WinLag, colV, dflt, i64), 3),
		),
	}
}

// TestOverWindowCleanRandom runs random changes at or above a rising
// watermark (what the LateFilter under such a window lets through) with
// commits and restarts, and checks after every barrier that the emitted
// rows equal the batch result over every row, although the rows behind the
// watermark are dropped from state; and that they are.
func TestOverWindowCleanRandom(t *testing.T) {
	for name, w := range cleanTestConfigs() {
		w := finishWindow(w)
		for seed := int64(1); seed <= *winSeeds; seed++ {
			t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) { runOverWindowClean(t, w, seed, 300) })
		}
	}
}

func runOverWindowClean(t *testing.T, w *planner.Window, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	run := newWinRun(t, w)
	var rows []*winTestRow
	wm := int64(0)
	newValues := func(r *winTestRow) {
		r.p = types.DInt(rng.Int63n(3))
		r.o = types.DInt(wm + rng.Int63n(6))
		r.v = types.DInt(rng.Int63n(20) - 5)
		if rng.Intn(5) == 0 {
			r.v = types.Null
		}
		r.d, r.flag = types.Null, types.Null
	}
	for step := 0; step < steps; step++ {
		var batch []*winTestRow
		var ops []Op
		var open []*winTestRow // rows at or above the watermark: they may change
		for _, r := range rows {
			if r.exists && r.o.I >= wm {
				open = append(open, r)
			}
		}
		for n := 1 + rng.Intn(5); n > 0; n-- {
			switch k := rng.Intn(10); {
			case k < 6 || len(open) == 0:
				r := &winTestRow{id: int64(len(rows)), exists: true}
				newValues(r)
				rows = append(rows, r)
				batch, ops = append(batch, r), append(ops, Insert)
			case k < 8:
				r := open[rng.Intn(len(open))]
				if !r.exists {
					continue
				}
				r.exists = false
				c := *r
				batch, ops = append(batch, &c), append(ops, Delete)
			default:
				r := open[rng.Intn(len(open))]
				if !r.exists {
					continue
				}
				old := *r
				newValues(r)
				c := *r
				batch, ops = append(batch, &old, &c), append(ops, UpdateDelete, UpdateInsert)
			}
		}
		run.batch(batch, ops)
		if rng.Intn(3) > 0 && step != steps-1 {
			continue
		}
		wm += rng.Int63n(3)
		run.watermark(colO, wm)
		run.barrier(rng, rows)
	}
	// Behind the watermark each of the 3 partitions keeps at most the few
	// rows the calls reach back to (4 for ROWS 4 PRECEDING; RANGE and
	// GROUPS offsets of 2 over o values at most a few apart).
	live, stored := 0, countKeys(t, run.store.Table(1))
	for _, r := range rows {
		if r.exists {
			live++
		}
	}
	open := 0
	for _, r := range rows {
		if r.exists && r.o.I >= wm {
			open++
		}
	}
	if stored > open+3*20 || stored >= live {
		t.Fatalf("seed %d: %d keys stored for %d rows, %d of them at or above the watermark", seed, stored, live, open)
	}
}
