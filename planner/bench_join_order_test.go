//go:build cgo

package planner

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkPlanJoins plans select5.test-shaped joins (the query of
// `streamsql bench joins`: tables t1..tN (a, b, x) without keys, joined
// along a random tree by a_child = b_parent, FROM in random order, t1
// pinned by a1 = 5), without row counts and with ten rows per table. One op
// is one PlanBatch of the bound query (binding not timed).
func BenchmarkPlanJoins(b *testing.B) {
	for _, n := range []int{10, 30, 64} {
		cat := catalog.New()
		for i := 1; i <= n; i++ {
			cat.Add(&catalog.Relation{ID: uint32(i), Name: fmt.Sprintf("t%d", i), Kind: catalog.Table, StateTable: uint32(i),
				Columns: []catalog.Column{
					{Name: fmt.Sprintf("a%d", i), Type: types.Int32T}, {Name: fmt.Sprintf("b%d", i), Type: types.Int32T},
					{Name: fmt.Sprintf("x%d", i), Type: types.TextT}, {Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true}},
				Key: []int{3}})
		}
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		var preds, cols, from []string
		for child := 2; child <= n; child++ {
			preds = append(preds, fmt.Sprintf("a%d = b%d", child, 1+rng.IntN(child-1)))
		}
		preds = append(preds, "a1 = 5")
		for i := 1; i <= n; i++ {
			cols = append(cols, fmt.Sprintf("x%d", i))
			from = append(from, fmt.Sprintf("t%d", i))
		}
		rng.Shuffle(len(preds), func(i, j int) { preds[i], preds[j] = preds[j], preds[i] })
		rng.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
		q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), strings.Join(from, ", "), strings.Join(preds, " AND "))
		st, err := bindText(cat, q)
		if err != nil {
			b.Fatal(err)
		}
		rel := st.(*ir.Select).Query
		for _, sized := range []bool{false, true} {
			var opts BatchOptions
			if sized {
				opts.Rows = func(*catalog.Relation) (float64, bool) { return 10, true }
			}
			b.Run(fmt.Sprintf("tables=%d/sizes=%t", n, sized), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, _, err := PlanBatchWith(rel, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
