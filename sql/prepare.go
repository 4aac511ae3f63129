package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Session-level prepared statements (PREPARE, EXECUTE, DEALLOCATE) and
// DISCARD. They are the SQL counterpart of the extended protocol's Parse and
// Bind: PREPARE keeps the statement (bound again at every EXECUTE, with the
// argument values as constants, like a Bind).

// PrepareStmt is PREPARE name [(types)] AS statement.
type PrepareStmt struct {
	Name string
	// Types are the declared parameter types (UnknownT where none is).
	Types []types.T
	// Stmt is the statement prepared.
	Stmt *Parsed
}

// Execute is EXECUTE name [(args)].
type Execute struct {
	Name string
	args []*pg_query.Node
	// at is the EXECUTE statement, for binding its arguments.
	at *Parsed
}

// NumArgs is the number of arguments EXECUTE passes.
func (e *Execute) NumArgs() int { return len(e.args) }

// Deallocate is DEALLOCATE [PREPARE] name | ALL.
type Deallocate struct {
	Name string
	All  bool
}

// Discard is DISCARD ALL | PLANS | SEQUENCES | TEMP; What is upper case.
type Discard struct{ What string }

func (*PrepareStmt) Tag() string { return "PREPARE" }
func (*Execute) Tag() string     { return "EXECUTE" }
func (d *Deallocate) Tag() string {
	if d.All {
		return "DEALLOCATE ALL"
	}
	return "DEALLOCATE"
}
func (d *Discard) Tag() string { return "DISCARD " + d.What }

// parsed returns the statement at node inside the statement b binds.
func (b *binder) parsed(node *pg_query.Node) *Parsed {
	return &Parsed{Text: b.text, node: node, base: b.base, full: b.full, start: b.textStart, end: b.textStart + len(b.text)}
}

func (b *binder) bindPrepare(s *pg_query.PrepareStmt) (ir.Statement, error) {
	p := &PrepareStmt{Name: s.Name, Stmt: b.parsed(s.Query)}
	for _, n := range s.Argtypes {
		tn := n.GetTypeName()
		if tn == nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "invalid parameter type in PREPARE")
		}
		t, err := b.bindTypeName(tn)
		if err != nil {
			return nil, err
		}
		p.Types = append(p.Types, t)
	}
	return p, nil
}

func (b *binder) bindExecute(s *pg_query.ExecuteStmt) (ir.Statement, error) {
	return &Execute{Name: s.Name, args: s.Params, at: b.parsed(nil)}, nil
}

func bindDiscard(s *pg_query.DiscardStmt) (ir.Statement, error) {
	switch s.Target {
	case pg_query.DiscardMode_DISCARD_ALL:
		return &Discard{What: "ALL"}, nil
	case pg_query.DiscardMode_DISCARD_PLANS:
		return &Discard{What: "PLANS"}, nil
	case pg_query.DiscardMode_DISCARD_SEQUENCES:
		return &Discard{What: "SEQUENCES"}, nil
	case pg_query.DiscardMode_DISCARD_TEMP:
		return &Discard{What: "TEMP"}, nil
	}
	return nil, sqlerr.Unsupported("DISCARD")
}

// BindExecuteArgs binds the arguments of EXECUTE as constant expressions of
// the prepared statement's parameter types (assignment casts, as PostgreSQL
// applies). The caller checks their number.
func BindExecuteArgs(cat *catalog.Catalog, searchPath []string, zone *types.Zone, ex *Execute, paramTypes []types.T) ([]ir.Expr, error) {
	p := ex.at
	b := &binder{cat: cat, path: searchPath, full: p.full, base: p.base, text: p.Text, textStart: textStart(p), zone: zone}
	out := make([]ir.Expr, len(ex.args))
	for i, n := range ex.args {
		e, err := b.bindExpr(&exprCtx{scope: &scope{}, clause: "EXECUTE parameter"}, n)
		if err != nil {
			return nil, err
		}
		if out[i], err = b.castTo(e, paramTypes[i], exprLocation(n), false); err != nil {
			return nil, err
		}
	}
	return out, nil
}
