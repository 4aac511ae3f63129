package engine

import (
	"context"

	"fmt"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// ServerVersion is reported to clients as server_version.
const ServerVersion = "15.0 (streamsql)"

// parameter is a session parameter clients may SET and SHOW.
type parameter struct {
	def string
	// check validates and normalises a new value; nil accepts anything.
	check func(v string) (string, error)
	// readOnly parameters cannot be SET.
	readOnly bool
	// report parameters are sent to the client (ParameterStatus) on change.
	report bool
	desc   string
}

func onlyValues(name string, allowed ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, a := range allowed {
			if strings.EqualFold(strings.TrimSpace(v), a) {
				return a, nil
			}
		}
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v).
			WithHint("streamsql supports: %s", strings.Join(allowed, ", "))
	}
}

var parameters = map[string]*parameter{
	"application_name":                    {def: "", report: true, desc: "Sets the application name to be reported in statistics and logs."},
	"client_encoding":                     {def: "UTF8", report: true, check: onlyValues("client_encoding", "UTF8", "UNICODE"), desc: "Sets the client's character set encoding."},
	"datestyle":                           {def: "ISO, MDY", report: true, check: onlyValues("DateStyle", "ISO, MDY", "ISO"), desc: "Sets the display format for date and time values."},
	"intervalstyle":                       {def: "postgres", report: true, check: onlyValues("IntervalStyle", "postgres"), desc: "Sets the display format for interval values."},
	"timezone":                            {def: "UTC", report: true, check: checkTimeZone, desc: "Sets the time zone for displaying and interpreting time stamps."},
	"extra_float_digits":                  {def: "1", desc: "Sets the number of digits displayed for floating-point values."},
	"search_path":                         {def: "\"$user\", public", desc: "Sets the schema search order for names that are not schema-qualified."},
	"standard_conforming_strings":         {def: "on", report: true, check: onlyValues("standard_conforming_strings", "on"), desc: "Causes '...' strings to treat backslashes literally."},
	"statement_timeout":                   {def: "0", check: checkMillis("statement_timeout"), desc: "Sets the maximum allowed duration of any statement."},
	"lock_timeout":                        {def: "0", check: checkMillis("lock_timeout"), desc: "Sets the maximum allowed duration of any wait for a lock."},
	"idle_in_transaction_session_timeout": {def: "0", check: checkMillis("idle_in_transaction_session_timeout"), desc: "Sets the maximum allowed idle time between queries, when in a transaction."},
	"client_min_messages":                 {def: "notice", desc: "Sets the message levels that are sent to the client."},
	"bytea_output":                        {def: "hex", check: onlyValues("bytea_output", "hex"), desc: "Sets the output format for bytea."},
	"transaction_isolation":               {def: "read committed", check: checkIsolation("transaction_isolation"), desc: "Sets the current transaction's isolation level."},
	"default_transaction_isolation":       {def: "read committed", check: checkIsolation("default_transaction_isolation"), desc: "Sets the transaction isolation level of each new transaction."},
	"default_transaction_read_only":       {def: "off", check: checkBool("default_transaction_read_only"), desc: "Sets the default read-only status of new transactions."},
	"transaction_read_only":               {def: "off", desc: "Sets the current transaction's read-only status."},
	"synchronous_commit":                  {def: "on", desc: "Every acknowledged write is durable; accepted for compatibility."},
	"jit":                                 {def: "off", desc: "Accepted for compatibility."},
	"row_security":                        {def: "on", desc: "Accepted for compatibility."},
	"server_version":                      {def: ServerVersion, readOnly: true, report: true, desc: "Shows the server version."},
	"server_version_num":                  {def: "150000", readOnly: true, desc: "Shows the server version as an integer."},
	"server_encoding":                     {def: "UTF8", readOnly: true, report: true, desc: "Shows the server (database) character set encoding."},
	"integer_datetimes":                   {def: "on", readOnly: true, report: true, desc: "Shows whether datetimes are integer based."},
	"max_identifier_length":               {def: "63", readOnly: true, desc: "Shows the maximum identifier length."},
	"max_index_keys":                      {def: "32", readOnly: true, desc: "Shows the maximum number of index keys."},
	"is_superuser":                        {def: "on", readOnly: true, report: true, desc: "Shows whether the current user is a superuser."},
	"barrier_interval":                    {readOnly: true, desc: "Time between checkpoint barriers (set with --barrier-interval)."},
	"memory_limit":                        {readOnly: true, desc: "The server's memory budget (set with --memory-limit; 0: none)."},
	"query_memory_limit": {check: checkMemoryLimit,
		desc: "Sets the most memory one query may hold (B, kB, MB, GB, TB; 0: no limit); a query that needs more fails with 53200."},
	"password_encryption": {def: "scram-sha-256", check: onlyValues("password_encryption", "scram-sha-256", "md5"),
		desc: "Chooses the algorithm for encrypting passwords (md5 only on a server run with --auth md5)."},
	"checkpoint_mode": {def: "exactly_once", check: onlyValues("checkpoint_mode", "exactly_once", "at_least_once"),
		desc: "Barrier alignment of materialized views created in this session: exactly_once aligns, at_least_once never blocks an input (see docs/fault-tolerance.md)."},
	// The streaming dialect's session settings, accepted so that scripts
	// written for it run; what they ask for is streamsql's behaviour anyway
	// or has no counterpart yet.
	"rw_implicit_flush": {def: "true", check: boolValue("rw_implicit_flush"),
		desc: "Accepted for compatibility: every write is visible to the views when it is acknowledged."},
	"streaming_parallelism": {def: "default", check: parallelismValue,
		desc: "Number of actors the partitioned part of a materialized view or sink created in this session runs on (default: one per core)."},
	"query_mode": {def: "auto", check: onlyValues("query_mode", "auto", "local", "distributed"),
		desc: "Accepted for compatibility: batch queries run in the server process."},
	"visibility_mode": {def: "default", check: onlyValues("visibility_mode", "default", "checkpoint", "all"),
		desc: "Accepted for compatibility: queries see the last checkpoint, which every write triggers."},
	"streaming_rate_limit": {def: "default", desc: "Accepted for compatibility: sources and backfills are not rate limited."},
	"backfill_rate_limit":  {def: "default", desc: "Accepted for compatibility: backfills are not rate limited."},
	"subscribe_backlog_rows": {def: strconv.Itoa(defaultBacklogRows), check: checkBacklogRows,
		desc: "Sets how many changes a SUBSCRIBE may have waiting to be sent; past that it ends with 53400."},
}

// boolValue accepts PostgreSQL's spellings of a boolean parameter.
func boolValue(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
		case "true", "on", "yes", "1", "t":
			return "true", nil
		case "false", "off", "no", "0", "f":
			return "false", nil
		}
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "parameter \"%s\" requires a Boolean value", name)
	}
}

// displayNames are the spellings SHOW uses for parameters with mixed case.
var displayNames = map[string]string{"datestyle": "DateStyle", "intervalstyle": "IntervalStyle", "timezone": "TimeZone"}

// session implements pgwire.Session. Its methods (and those of its prepared
// statements and portals) are called from one goroutine.
type session struct {
	e *Engine
	// random is the session's generator for random() (setseed).
	random *eval.Random
	// user is the user name the client connected as ("$user" in the
	// search path).
	user string
	// cat is the catalog of the database the session connected to.
	cat    *catalog.Catalog
	params map[string]string
	// tx is the open transaction block (nil outside one), and txParams
	// the parameters at its BEGIN and at each of its savepoints.
	tx       *txn
	txParams []txSavepointState
	// prepared are the statements of PREPARE, by name.
	prepared map[string]*sqlPrepared
	// seq counts the statements the session has run (see portal.Run).
	seq uint64
	// zone is the TimeZone setting's zone, which statements are bound in.
	zone *types.Zone
	// cursors are the open cursors, by name (cursor.go).
	cursors map[string]*cursor
	// drained is closed by Drain (subscribe.go).
	drained   chan struct{}
	drainOnce sync.Once
	// pid is the session's pg_backend_pid: its connection's process id, or
	// for a session of no connection a number counted here (0 until asked).
	pid int32
	// backend is the connection, when hasBackend: what pg_cancel_backend
	// and pg_terminate_backend signal. Both are set before the session is
	// shared and then read from any goroutine.
	backend    pgwire.Backend
	hasBackend bool
	// warnings are the WARNINGs the statement being bound queued
	// (session_signal.go), sent before its result.
	warnings []string
	// localRole is what a SET LOCAL ROLE in the open transaction hides
	// (session_role.go); nil if none.
	localRole *localRoleState
}

func newSession(e *Engine, startup map[string]string) (*session, error) {
	s := &session{e: e, user: startup["user"], cat: e.cat.In(startup["database"]), params: map[string]string{}, zone: types.UTC,
		drained: make(chan struct{})}
	if v, ok := startup["application_name"]; ok {
		s.params["application_name"] = v
	}
	z, err := startupTimeZone(startup)
	if err != nil {
		return nil, err
	}
	if z != nil {
		s.params["timezone"] = z.Name()
		s.zone = z
	}
	if err := s.startupOptions(startup["options"]); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *session) TxStatus() byte { return s.txStatus() }

func (s *session) Close() {
	if s.tx != nil {
		s.tx.end()
		s.tx = nil
	}
	s.closeCursors(func(*cursor) bool { return true })
	s.e.sessionClosed(s.cat.DatabaseName())
	s.e.queries.closed(s)
}

// Query runs each statement of text in order.
func (s *session) Query(ctx context.Context, text string, w pgwire.ResultWriter) error {
	stmts, err := sql.Parse(text)
	if err != nil {
		return err
	}
	s.bindIn(stmts)
	if len(stmts) == 0 {
		return w.EmptyQuery()
	}
	if s.implicitTransaction(stmts) {
		return s.runImplicit(ctx, stmts, w)
	}
	for _, p := range stmts {
		if err := s.run(ctx, p, w); err != nil {
			return err
		}
	}
	return nil
}

// run binds and executes one statement. A panic is a bug: it fails the
// statement with XX000 and is logged with its stack, instead of taking the
// server down.
func (s *session) run(ctx context.Context, p *sql.Parsed, w pgwire.ResultWriter) (err error) {
	defer func() { s.noteError(err) }()
	defer s.recoverPanic(&err)
	if err := s.checkFailed(p); err != nil {
		return err
	}
	if err := s.checkDatabase(); err != nil {
		return err
	}
	s.endLocalRole(true)
	st, refs, err := sql.BindInZoneRefs(s.cat, s.searchPath(), s.zone, p)
	if err != nil {
		return err
	}
	defer s.e.queries.start(s, p.Text)()
	ctx, timedOut := s.withStatementTimeout(ctx)
	return timedOut(s.executeChecked(ctx, st, refs, w))
}

func (s *session) execute(ctx context.Context, st ir.Statement, w pgwire.ResultWriter) error {
	if err := s.sendWarnings(w); err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	if s.random == nil {
		s.random = eval.NewRandom()
	}
	q := batchQuery{now: now, memoryLimit: s.queryMemoryLimit(), random: s.random, cat: s.cat, user: s.currentUser(),
		pid: s.BackendPID(), lockTimeout: s.timeout("lock_timeout")}
	if s.tx == nil {
		if err := checkWritable(s.value("default_transaction_read_only") == "on", st); err != nil {
			return err
		}
	}
	if tx := s.tx; tx != nil {
		if err := refuseInTransaction(st); err != nil {
			return err
		}
		if err := checkWritable(tx.readOnly, st); err != nil {
			return err
		}
		if readsOrWrites(st) {
			tx.beginStatement()
			defer tx.endStatement()
			q.tx = tx
		}
	}
	e := s.e
	if ok, err := e.executeReturning(ctx, st, q, w); ok {
		return err
	}
	switch st := st.(type) {
	case *ir.Select:
		return e.selectRows(ctx, st.Query, q, w)
	case *sql.LockTable:
		if s.tx == nil {
			return sqlerr.New(sqlerr.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
		}
		return w.Complete(st.Tag())
	case *ir.Insert:
		n, err := e.insert(ctx, st, q)
		if err != nil {
			return err
		}
		return w.Complete(insertTag(n))
	case *ir.Update:
		n, err := e.modify(ctx, st, q)
		if err != nil {
			return err
		}
		return w.Complete(fmt.Sprintf("UPDATE %d", n))
	case *ir.Delete:
		n, err := e.modify(ctx, st, q)
		if err != nil {
			return err
		}
		return w.Complete(fmt.Sprintf("DELETE %d", n))
	case *sql.CopyFrom:
		return e.copyFrom(ctx, st, q, s.zone, w)
	case *sql.CopyTo:
		return e.copyTo(ctx, st, q, s.zone, w)
	case *ir.CreateTable:
		if err := e.createTable(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *ir.CreateMaterializedView:
		if err := e.createView(ctx, s.cat, st, s.value("checkpoint_mode") == "at_least_once", e.sessionParallelism(s.value("streaming_parallelism")), w, nil); err != nil {
			return err
		}
	case *sql.CreateSink:
		if err := e.createSink(ctx, s.cat, st, s.value("checkpoint_mode") == "at_least_once", e.sessionParallelism(s.value("streaming_parallelism")), w); err != nil {
			return err
		}
	case *sql.DropSink:
		d := &ir.Drop{Kind: catalog.Sink, Names: []ir.ObjectName{st.Name}, IfExists: st.IfExists, Path: st.Path}
		if err := e.drop(ctx, s.cat, d, w); err != nil {
			return err
		}
	case *ir.Drop:
		if err := e.drop(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *ir.CreateIndex:
		if err := e.createIndex(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *ir.DropIndex:
		if err := e.dropIndex(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.CreateSource:
		if err := e.createSource(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.CreateView:
		if err := e.createPlainView(s.cat, st); err != nil {
			return err
		}
	case *sql.CreateDatabase:
		if err := e.createDatabase(st); err != nil {
			return err
		}
	case *sql.DropDatabase:
		if err := e.dropDatabase(ctx, s, st, w); err != nil {
			return err
		}
	case *sql.CreateSchema:
		if err := e.createSchema(s.cat, st, w); err != nil {
			return err
		}
	case *sql.DropSchema:
		if err := e.dropSchema(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.CreateFunction:
		if err := e.createFunction(s.cat, st); err != nil {
			return err
		}
	case *sql.DropFunction:
		if err := e.dropFunction(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.DropSource:
		d := &ir.Drop{Kind: catalog.Source, Names: []ir.ObjectName{st.Name}, IfExists: st.IfExists, Cascade: st.Cascade, Path: st.Path}
		if err := e.drop(ctx, s.cat, d, w); err != nil {
			return err
		}
	case *ir.Explain:
		lines, err := e.explainStatement(ctx, st, q, e.sessionParallelism(s.value("streaming_parallelism")))
		if err != nil {
			return err
		}
		return writeTextColumn(w, e, "QUERY PLAN", lines, "EXPLAIN")
	case *sql.ExplainView:
		lines, err := e.explainView(s.cat, st)
		if err != nil {
			return err
		}
		return writeTextColumn(w, e, "QUERY PLAN", lines, "EXPLAIN")
	case *sql.VerifyView:
		return s.verifyView(ctx, st, w)
	case *ir.Flush, *sql.Checkpoint:
		if err := e.Flush(ctx); err != nil {
			return err
		}
	case *sql.Savepoint:
		return e.savepoint(ctx, st, w)
	case *sql.Subscribe:
		return s.runSubscribe(ctx, st, w)
	case *sql.CopySubscribe:
		return s.copySubscribe(ctx, st, w)
	case *sql.DeclareSubscriptionCursor:
		return s.declareSubscriptionCursor(st, w)
	case *sql.DropSubscription:
		if err := e.dropSubscription(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.DeclareCursor:
		return s.declareCursor(ctx, st, q, w)
	case *sql.Fetch:
		return s.fetch(ctx, st, w)
	case *sql.CloseCursor:
		return s.closeCursor(st, w)
	case *sql.AlterViewPause:
		if err := e.alterViewPause(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.AlterViewParallelism:
		if err := e.alterViewParallelism(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.AlterViewQuery:
		if err := e.alterViewQuery(ctx, s.cat, st, w); err != nil {
			return err
		}
	case *sql.ShowCreate, *sql.ShowColumns:
		return s.showCatalog(st, w)
	case *ir.ShowRelations:
		return writeTextColumn(w, e, "Name", e.relationNames(s.cat, st.Kind), fmt.Sprintf("SHOW %d", len(e.relationNames(s.cat, st.Kind))))
	case *ir.SetVar:
		if err := s.set(st, w); err != nil {
			return err
		}
	case *ir.ShowVar:
		if st.Name == "jobs" {
			return s.showJobs(w)
		}
		return s.show(st.Name, w)
	case *ir.Transaction:
		committed := st.Kind == ir.Commit && s.tx != nil && !s.tx.failed
		err := s.transaction(st, w)
		s.endLocalRole(committed)
		return err
	case *sql.SetTransaction:
		if err := s.setTransaction(st, w); err != nil {
			return err
		}
	default:
		if ok, err := s.executeRoleStatement(st, w); ok || err != nil {
			return err
		}
		if ok, err := s.sessionCommand(ctx, st, w); ok {
			return err
		}
		ok, err := e.executeAlter(ctx, s.cat, st, q, w)
		if !ok {
			return sqlerr.Unsupported("statement %s", st.Tag())
		}
		if err != nil {
			return err
		}
	}
	return w.Complete(st.Tag())
}

// writeTextColumn returns rows of one text column.
func writeTextColumn(w pgwire.ResultWriter, e *Engine, name string, rows []string, tag string) error {
	if err := w.BeginRows([]pgwire.Column{{Name: name, Type: types.TextT}}); err != nil {
		return err
	}
	b := array.NewStringBuilder(e.mem)
	defer b.Release()
	b.AppendValues(rows, nil)
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecordBatch(exec.SchemaOf([]types.T{types.TextT}), []arrow.Array{arr}, int64(len(rows)))
	defer rec.Release()
	if len(rows) > 0 {
		if err := w.WriteRows(rec); err != nil {
			return err
		}
	}
	return w.Complete(tag)
}

func (s *session) value(name string) string {
	if v, ok := s.roleParamValue(name); ok {
		return v
	}
	switch name {
	case "transaction_isolation":
		if s.tx != nil {
			return s.tx.isolation
		}
		name = "default_transaction_isolation"
	case "transaction_read_only":
		if s.tx != nil {
			return onOff(s.tx.readOnly)
		}
		name = "default_transaction_read_only"
	}
	if v, ok := s.params[name]; ok {
		return v
	}
	switch name {
	case "barrier_interval":
		return s.e.opts.BarrierInterval.String()
	case "query_memory_limit":
		return exec.FormatBytes(s.e.opts.QueryMemoryLimit)
	case "memory_limit":
		return exec.FormatBytes(s.e.budget.Limit())
	case "checkpoint_mode":
		if s.e.opts.AtLeastOnce {
			return "at_least_once"
		}
	}
	if p := parameters[name]; p != nil {
		return p.def
	}
	return ""
}

func (s *session) set(st *ir.SetVar, w pgwire.ResultWriter) error {
	name := strings.ToLower(st.Name)
	if name == "all" && st.Reset {
		kept := map[string]string{}
		for _, k := range []string{roleParam, sessionAuthParam} {
			if v, ok := s.params[k]; ok {
				kept[k] = v
			}
		}
		s.params = kept
		s.setZone()
		return nil
	}
	if name == roleParam || name == sessionAuthParam {
		return s.setRoleParam(st, name, w)
	}
	if name == "" {
		return nil // SET TRANSACTION ... and friends
	}
	if name == "time zone" {
		name = "timezone"
	}
	if name == "transaction_isolation" && !st.Reset {
		return s.setTransaction(&sql.SetTransaction{Isolation: strings.ToLower(strings.TrimSpace(st.Value))}, w)
	}
	if name == "transaction_read_only" && !st.Reset {
		v, err := checkBool(name)(st.Value)
		if err != nil {
			return err
		}
		ro := v == "on"
		return s.setTransaction(&sql.SetTransaction{ReadOnly: &ro}, w)
	}
	p := parameters[name]
	if p == nil {
		if strings.Contains(name, ".") {
			// Custom (extension-style) parameters are free-form, as in PostgreSQL.
			if st.Reset {
				delete(s.params, name)
			} else {
				s.params[name] = st.Value
			}
			return nil
		}
		return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter \"%s\"", st.Name)
	}
	if p.readOnly {
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter \"%s\" cannot be changed", st.Name)
	}
	v := p.def
	if !st.Reset {
		v = st.Value
		if p.check != nil {
			var err error
			if v, err = p.check(v); err != nil {
				return err
			}
		}
	}
	s.params[name] = v
	if st.Reset {
		delete(s.params, name)
	}
	if name == "timezone" {
		s.setZone()
	}
	if p.report {
		disp := displayNames[name]
		if disp == "" {
			disp = name
		}
		return w.ParameterStatus(disp, v)
	}
	return nil
}

// showKey normalises the parameter name of SHOW.
func showKey(name string) string {
	name = strings.ToLower(name)
	if name == "time zone" {
		name = "timezone"
	}
	return name
}

// showAll reports whether SHOW name shows every parameter.
func showAll(name string) bool { return showKey(name) == "all" }

// showName is the name of the column SHOW name returns.
func showName(name string) string {
	name = showKey(name)
	if disp := displayNames[name]; disp != "" {
		return disp
	}
	return name
}

func (s *session) show(name string, w pgwire.ResultWriter) error {
	name = showKey(name)
	if name == "all" {
		var names []string
		for n := range parameters {
			names = append(names, n)
		}
		sort.Strings(names)
		if err := w.BeginRows([]pgwire.Column{{Name: "name", Type: types.TextT}, {Name: "setting", Type: types.TextT}, {Name: "description", Type: types.TextT}}); err != nil {
			return err
		}
		nb, vb, db := array.NewStringBuilder(s.e.mem), array.NewStringBuilder(s.e.mem), array.NewStringBuilder(s.e.mem)
		defer nb.Release()
		defer vb.Release()
		defer db.Release()
		for _, n := range names {
			disp := displayNames[n]
			if disp == "" {
				disp = n
			}
			nb.Append(disp)
			vb.Append(s.value(n))
			db.Append(parameters[n].desc)
		}
		cols := []arrow.Array{nb.NewArray(), vb.NewArray(), db.NewArray()}
		rec := array.NewRecordBatch(exec.SchemaOf([]types.T{types.TextT, types.TextT, types.TextT}), cols, int64(len(names)))
		for _, c := range cols {
			c.Release()
		}
		defer rec.Release()
		if err := w.WriteRows(rec); err != nil {
			return err
		}
		return w.Complete(fmt.Sprintf("SHOW %d", len(names)))
	}
	if _, ok := parameters[name]; !ok {
		if _, custom := s.params[name]; !custom && name != roleParam && name != sessionAuthParam {
			return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter \"%s\"", name)
		}
	}
	return writeTextColumn(w, s.e, showName(name), []string{s.value(name)}, "SHOW")
}
