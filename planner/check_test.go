package planner

import (
	"testing"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// TestUntypedColumnRejected checks that a plan with an untyped column fails
// with an internal error rather than reaching the operators.
func TestUntypedColumnRejected(t *testing.T) {
	untyped := &sql.Const{Value: types.DText("k"), T: types.UnknownT}
	rel := &sql.Aggregate{
		Input:   &sql.Values{Rows: [][]sql.Expr{{}}},
		GroupBy: []sql.Expr{untyped},
		Cols:    []sql.Column{{Name: "k", Type: types.UnknownT}},
	}
	if _, _, err := PlanBatch(rel); sqlerr.Code(err) != sqlerr.InternalError {
		t.Fatalf("PlanBatch: %v, want an internal error", err)
	}
	typed := &sql.Project{
		Input: &sql.Values{Rows: [][]sql.Expr{{}}},
		Exprs: []sql.Expr{&sql.Const{Value: types.DText("k"), T: types.TextT}},
		Cols:  []sql.Column{{Name: "k", Type: types.TextT}},
	}
	if _, _, err := PlanBatch(typed); err != nil {
		t.Fatalf("PlanBatch of a typed plan: %v", err)
	}
}
