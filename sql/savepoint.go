package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// Checkpoint is CHECKPOINT: it forces a checkpoint now and returns when it
// is committed.
type Checkpoint struct{}

// Savepoint is SELECT create_savepoint('name') or SELECT
// drop_savepoint('name'): a durable, self-contained copy of the last
// committed checkpoint, kept under the data directory.
type Savepoint struct {
	Name string
	Drop bool
}

func (*Checkpoint) Tag() string { return "CHECKPOINT" }
func (*Savepoint) Tag() string  { return "SELECT 1" }

// bindSavepointCall recognises SELECT create_savepoint('name') and SELECT
// drop_savepoint('name'), which act on the database rather than compute a
// value. ok is false for every other SELECT.
func (b *binder) bindSavepointCall(sel *pg_query.SelectStmt) (st ir.Statement, ok bool, err error) {
	if len(sel.FromClause) > 0 || len(sel.TargetList) != 1 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil, false, nil
	}
	f := sel.TargetList[0].GetResTarget().GetVal().GetFuncCall()
	if f == nil {
		return nil, false, nil
	}
	name := funcName(f.Funcname)
	if name != "create_savepoint" && name != "drop_savepoint" {
		return nil, false, nil
	}
	if len(f.Args) != 1 || f.Args[0].GetAConst() == nil || f.Args[0].GetAConst().GetSval() == nil {
		return nil, true, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "%s takes one text constant, the savepoint's name", name))
	}
	return &Savepoint{Name: f.Args[0].GetAConst().GetSval().Sval, Drop: name == "drop_savepoint"}, true, nil
}

// AlterViewPause is ALTER MATERIALIZED VIEW name PAUSE | RESUME: a paused
// view keeps its state and its inputs' changes and catches up on resume.
type AlterViewPause struct {
	Name  ir.ObjectName
	Pause bool
	// Path is the session's search path.
	Path []string
}

func (s *AlterViewPause) Tag() string { return "ALTER MATERIALIZED VIEW" }
