package engine

import (
	"context"
	"maps"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
)

// errInFailedTransaction is what every statement but COMMIT and ROLLBACK
// gets in a failed transaction block.
var errInFailedTransaction = sqlerr.New(sqlerr.InFailedSQLTransaction,
	"current transaction is aborted, commands ignored until end of transaction block")

// txStatus is the session's ReadyForQuery status: 'I' idle, 'T' in a
// transaction block, 'E' in a failed one.
func (s *session) txStatus() byte {
	switch {
	case s.tx == nil:
		return 'I'
	case s.tx.failed:
		return 'E'
	}
	return 'T'
}

// checkFailed fails with 25P02 if the session is in a failed transaction
// block and p does not end it.
func (s *session) checkFailed(p *sql.Parsed) error {
	if s.tx != nil && s.tx.failed && (p == nil || !sql.EndsTransaction(p)) {
		return errInFailedTransaction
	}
	return nil
}

// noteError puts the session's transaction block, if any, in the failed
// state when a statement (or a Parse or Bind) failed with err.
func (s *session) noteError(err error) {
	if err != nil && s.tx != nil {
		s.tx.failed = true
	}
}

// refuseInTransaction fails with 25001 for statements a transaction block
// does not run: DDL and the others that commit on their own.
func refuseInTransaction(st ir.Statement) error {
	switch st.(type) {
	case *ir.Select, *ir.Insert, *ir.Update, *ir.Delete, *sql.CopyFrom, *sql.CopyTo,
		*ir.Explain, *ir.SetVar, *sql.SetTransaction, *ir.ShowVar, *ir.ShowRelations, *ir.Transaction, *ir.Empty,
		*sql.DeclareCursor, *sql.Fetch, *sql.CloseCursor, *sql.Subscribe, *sql.CopySubscribe, *sql.DeclareSubscriptionCursor,
		*sql.LockTable, *sql.ShowCreate, *sql.ShowColumns, *sql.Truncate:
		return nil
	}
	if isSessionCommand(st) {
		return nil
	}
	return sqlerr.New(sqlerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", st.Tag())
}

// readsOrWrites reports whether st reads or writes tables (and so needs the
// transaction's snapshot).
func readsOrWrites(st ir.Statement) bool {
	switch st.(type) {
	case *ir.Select, *ir.Insert, *ir.Update, *ir.Delete, *sql.CopyFrom, *sql.CopyTo, *sql.Truncate:
		return true
	}
	return false
}

// txSavepointState is what a savepoint or BEGIN keeps of the session besides
// the transaction's writes: its parameters, which ROLLBACK restores.
type txSavepointState struct{ params map[string]string }

// transaction runs BEGIN, COMMIT, ROLLBACK and the savepoints of a
// transaction block.
func (s *session) transaction(st *ir.Transaction, w pgwire.ResultWriter) error {
	tag := st.Tag()
	switch st.Kind {
	case ir.Begin:
		if s.tx != nil {
			if err := w.Notice("WARNING", sqlerr.ActiveSQLTransaction, "there is already a transaction in progress"); err != nil {
				return err
			}
			break
		}
		iso := st.Isolation
		if iso == "" {
			iso = s.value("default_transaction_isolation")
		}
		s.tx = newTxn(s.e, iso)
		s.tx.owner.pid = s.BackendPID()
		s.tx.readOnly = s.value("default_transaction_read_only") == "on"
		if st.ReadOnly != nil {
			s.tx.readOnly = *st.ReadOnly
		}
		s.txParams = []txSavepointState{{params: maps.Clone(s.params)}}
	case ir.Commit:
		if s.tx == nil {
			if err := w.Notice("WARNING", sqlerr.NoActiveSQLTransaction, "there is no transaction in progress"); err != nil {
				return err
			}
			break
		}
		tx := s.tx
		if tx.failed {
			// COMMIT of a failed transaction rolls it back, and says so.
			tag = "ROLLBACK"
			if err := s.endTransaction(false, w); err != nil {
				return err
			}
			break
		}
		err := tx.commit()
		if eerr := s.endTransaction(err == nil, w); err == nil {
			err = eerr
		}
		if err != nil {
			return err
		}
	case ir.Rollback:
		if s.tx == nil {
			if err := w.Notice("WARNING", sqlerr.NoActiveSQLTransaction, "there is no transaction in progress"); err != nil {
				return err
			}
			break
		}
		if err := s.endTransaction(false, w); err != nil {
			return err
		}
	case ir.TxSavepoint, ir.TxRelease, ir.TxRollbackTo:
		if s.tx == nil {
			return sqlerr.New(sqlerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks",
				map[ir.TransactionKind]string{ir.TxSavepoint: "SAVEPOINT", ir.TxRelease: "RELEASE SAVEPOINT", ir.TxRollbackTo: "ROLLBACK TO SAVEPOINT"}[st.Kind])
		}
		if err := s.txSavepoint(st, w); err != nil {
			return err
		}
	}
	return w.Complete(tag)
}

// txSavepoint runs SAVEPOINT, RELEASE and ROLLBACK TO in a transaction.
func (s *session) txSavepoint(st *ir.Transaction, w pgwire.ResultWriter) error {
	tx := s.tx
	switch st.Kind {
	case ir.TxSavepoint:
		tx.savepoint(st.Name)
		s.txParams = append(s.txParams, txSavepointState{params: maps.Clone(s.params)})
	case ir.TxRelease:
		i, err := tx.findSavepoint(st.Name)
		if err != nil {
			return err
		}
		_ = tx.release(st.Name)
		s.txParams = s.txParams[:i+1]
	case ir.TxRollbackTo:
		i, err := tx.findSavepoint(st.Name)
		if err != nil {
			return err
		}
		if err := tx.rollbackTo(st.Name); err != nil {
			return err
		}
		s.txParams = s.txParams[:i+2]
		return s.restoreParams(s.txParams[i+1].params, w)
	}
	return nil
}

// endTransaction ends the session's transaction block; unless committed,
// the parameters SET in it go back to what they were at BEGIN.
func (s *session) endTransaction(committed bool, w pgwire.ResultWriter) error {
	s.endCursorTransaction(committed)
	s.tx.end()
	s.tx = nil
	saved := s.txParams
	s.txParams = nil
	if committed || len(saved) == 0 {
		return nil
	}
	return s.restoreParams(saved[0].params, w)
}

// restoreParams sets the session's parameters back to params, reporting to
// the client those it is told of that change.
func (s *session) restoreParams(params map[string]string, w pgwire.ResultWriter) error {
	old := s.params
	s.params = maps.Clone(params)
	s.setZone()
	for name, p := range parameters {
		if !p.report {
			continue
		}
		if old[name] == params[name] {
			continue
		}
		disp := displayNames[name]
		if disp == "" {
			disp = name
		}
		if err := w.ParameterStatus(disp, s.value(name)); err != nil {
			return err
		}
	}
	return nil
}

// setTransaction runs SET TRANSACTION and SET SESSION CHARACTERISTICS AS
// TRANSACTION (and SET transaction_isolation, transaction_read_only).
func (s *session) setTransaction(st *sql.SetTransaction, w pgwire.ResultWriter) error {
	if st.SessionDefault {
		if st.Isolation != "" {
			if err := s.set(&ir.SetVar{Name: "default_transaction_isolation", Value: st.Isolation}, w); err != nil {
				return err
			}
		}
		if st.ReadOnly != nil {
			return s.set(&ir.SetVar{Name: "default_transaction_read_only", Value: onOff(*st.ReadOnly)}, w)
		}
		return nil
	}
	tx := s.tx
	if tx == nil {
		return w.Notice("WARNING", sqlerr.NoActiveSQLTransaction, "SET TRANSACTION can only be used in transaction blocks")
	}
	if st.Isolation != "" {
		if _, err := checkIsolation("transaction_isolation")(st.Isolation); err != nil {
			return err
		}
		if tx.started && st.Isolation != tx.isolation {
			return sqlerr.New(sqlerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		tx.setIsolation(st.Isolation)
		tx.isolation = st.Isolation
	}
	if st.ReadOnly != nil {
		if !*st.ReadOnly && tx.readOnly && tx.started {
			return sqlerr.New(sqlerr.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
		}
		tx.readOnly = *st.ReadOnly
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// checkWritable fails with 25006 for a write in a READ ONLY transaction
// (readOnly).
func checkWritable(readOnly bool, st ir.Statement) error {
	if !readOnly {
		return nil
	}
	switch st.(type) {
	case *ir.Insert, *ir.Update, *ir.Delete, *sql.CopyFrom:
		tag := st.Tag()
		if _, copy := st.(*sql.CopyFrom); copy {
			tag = "COPY FROM"
		}
		return sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", tag)
	}
	return nil
}

// checkBool validates a boolean parameter shown as on or off.
func checkBool(name string) func(string) (string, error) {
	b := boolValue(name)
	return func(v string) (string, error) {
		v, err := b(v)
		if err != nil {
			return "", err
		}
		return onOff(v == "true"), nil
	}
}

// checkIsolation validates an isolation level. READ UNCOMMITTED runs as
// READ COMMITTED, as in PostgreSQL.
func checkIsolation(name string) func(string) (string, error) {
	return onlyValues(name, "read uncommitted", "read committed", "repeatable read", "serializable")
}

// implicitTransaction reports whether the statements of one simple query
// run as one implicit transaction, as PostgreSQL runs a query of several
// statements outside a transaction block: here when they are all INSERT,
// UPDATE, DELETE or SELECT and at least one writes.
func (s *session) implicitTransaction(stmts []*sql.Parsed) bool {
	if s.tx != nil || len(stmts) < 2 {
		return false
	}
	writes := false
	for _, p := range stmts {
		switch {
		case sql.IsWrite(p):
			writes = true
		case !sql.IsRead(p):
			return false
		}
	}
	return writes
}

// runImplicit runs stmts in an implicit transaction: every write commits at
// the end, or none if a statement fails.
func (s *session) runImplicit(ctx context.Context, stmts []*sql.Parsed, w pgwire.ResultWriter) error {
	s.tx = newTxn(s.e, s.value("default_transaction_isolation"))
	s.tx.owner.pid = s.BackendPID()
	s.tx.readOnly = s.value("default_transaction_read_only") == "on"
	s.txParams = []txSavepointState{{params: maps.Clone(s.params)}}
	for _, p := range stmts {
		if err := s.run(ctx, p, w); err != nil {
			_ = s.endTransaction(true, w)
			return err
		}
	}
	err := s.tx.commit()
	if eerr := s.endTransaction(true, w); err == nil {
		err = eerr
	}
	return err
}
