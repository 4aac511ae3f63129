package planner

import (
	"testing"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// TestUntypedColumnRejected checks that a plan with an untyped column fails
// with an internal error rather than reaching the operators.
func TestUntypedColumnRejected(t *testing.T) {
	untyped := &ir.Const{Value: types.DText("k"), T: types.UnknownT}
	rel := &ir.Aggregate{
		Input:   &ir.Values{Rows: [][]ir.Expr{{}}},
		GroupBy: []ir.Expr{untyped},
		Cols:    []ir.Column{{Name: "k", Type: types.UnknownT}},
	}
	if _, _, err := PlanBatch(rel); sqlerr.Code(err) != sqlerr.InternalError {
		t.Fatalf("PlanBatch: %v, want an internal error", err)
	}
	typed := &ir.Project{
		Input: &ir.Values{Rows: [][]ir.Expr{{}}},
		Exprs: []ir.Expr{&ir.Const{Value: types.DText("k"), T: types.TextT}},
		Cols:  []ir.Column{{Name: "k", Type: types.TextT}},
	}
	if _, _, err := PlanBatch(typed); err != nil {
		t.Fatalf("PlanBatch of a typed plan: %v", err)
	}
}
