package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// bindTransaction binds BEGIN/START TRANSACTION, COMMIT, ROLLBACK and the
// savepoints of a transaction block.
func (b *binder) bindTransaction(s *pg_query.TransactionStmt) (ir.Statement, error) {
	switch s.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		return &ir.Transaction{Kind: ir.Begin, Isolation: isolationOf(s.Options), ReadOnly: readOnlyOf(s.Options)}, nil
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		if s.Chain {
			return nil, b.errAt(s.Location, sqlerr.Unsupported("COMMIT AND CHAIN"))
		}
		return &ir.Transaction{Kind: ir.Commit}, nil
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if s.Chain {
			return nil, b.errAt(s.Location, sqlerr.Unsupported("ROLLBACK AND CHAIN"))
		}
		return &ir.Transaction{Kind: ir.Rollback}, nil
	case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
		return &ir.Transaction{Kind: ir.TxSavepoint, Name: s.SavepointName}, nil
	case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
		return &ir.Transaction{Kind: ir.TxRelease, Name: s.SavepointName}, nil
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return &ir.Transaction{Kind: ir.TxRollbackTo, Name: s.SavepointName}, nil
	}
	return nil, b.errAt(s.Location, sqlerr.Unsupported("%s", strings.TrimPrefix(s.Kind.String(), "TRANS_STMT_")))
}

// isolationOf returns the ISOLATION LEVEL of a transaction's options (BEGIN,
// SET TRANSACTION), lower case, or "".
func isolationOf(opts []*pg_query.Node) string {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defname != "transaction_isolation" {
			continue
		}
		if c := d.Arg.GetAConst(); c != nil {
			if v, ok := c.Val.(*pg_query.A_Const_Sval); ok {
				return strings.ToLower(v.Sval.Sval)
			}
		}
	}
	return ""
}

// readOnlyOf returns the READ ONLY / READ WRITE of a transaction's options
// (nil if neither is given).
func readOnlyOf(opts []*pg_query.Node) *bool {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defname != "transaction_read_only" {
			continue
		}
		if c := d.Arg.GetAConst(); c != nil {
			if v, ok := c.Val.(*pg_query.A_Const_Ival); ok {
				ro := v.Ival.Ival != 0
				return &ro
			}
		}
	}
	return nil
}

// SetTransaction is SET TRANSACTION (SessionDefault: SET SESSION
// CHARACTERISTICS AS TRANSACTION) with its isolation level ("" if not
// given) and READ ONLY / READ WRITE (nil if not given).
type SetTransaction struct {
	SessionDefault bool
	Isolation      string
	ReadOnly       *bool
}

func (*SetTransaction) Tag() string { return "SET" }

// EndsTransaction reports whether p is a statement that a failed transaction
// block still runs: COMMIT, ROLLBACK (also ROLLBACK TO a savepoint) and
// their spellings. Every other statement fails with 25P02 there, before it
// is bound.
func EndsTransaction(p *Parsed) bool {
	if p.node == nil {
		return false
	}
	t := p.node.GetTransactionStmt()
	if t == nil {
		return false
	}
	switch t.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT, pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK,
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
		return true
	}
	return false
}

// IsWrite reports whether p is an INSERT, UPDATE or DELETE, and IsRead
// whether it is a SELECT (without INTO): the statements that a simple query
// of several statements runs in one implicit transaction.
func IsWrite(p *Parsed) bool {
	if p.node == nil {
		return false
	}
	switch p.node.Node.(type) {
	case *pg_query.Node_InsertStmt, *pg_query.Node_UpdateStmt, *pg_query.Node_DeleteStmt:
		return true
	}
	return false
}

// IsRead reports whether p is a SELECT without INTO.
func IsRead(p *Parsed) bool {
	if p.node == nil {
		return false
	}
	s := p.node.GetSelectStmt()
	return s != nil && s.IntoClause == nil
}
