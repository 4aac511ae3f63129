package slt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Engine names for skipif and onlyif.
const (
	EngineStreamSQL  = "streamsql"
	EnginePostgreSQL = "postgresql"
)

// defaultConnection names the connection records run on when no connection
// line precedes them.
const defaultConnection = "default"

// Options configure a run.
type Options struct {
	// URL is the server to test, as accepted by pgconn.Connect, for example
	// postgres://user@127.0.0.1:4566/dev?sslmode=disable.
	URL string
	// Engine is the engine name skipif and onlyif compare with: "streamsql"
	// or "postgresql". When empty the runner asks the server: "streamsql" if
	// its server_version or version() mentions streamsql, "postgresql" if
	// version() starts with PostgreSQL, and otherwise no name (every skipif
	// runs, every onlyif skips).
	Engine string
	// Restart restarts the server under test for a restart directive. It
	// must return once the server accepts connections, with the URL to
	// reconnect to ("" keeps the old one). The runner closes its connections
	// before calling it and reconnects lazily after. A nil Restart makes
	// restart a no-op, as against PostgreSQL.
	Restart func(ctx context.Context) (newURL string, err error)
	// Kill crashes the server under test, as kill -9 would (only what it
	// had made durable survives), and starts it again, for a kill
	// directive. A nil Kill makes kill a no-op.
	Kill func(ctx context.Context) (newURL string, err error)
	// OwnDatabase makes Run run each file in a database of its own, created
	// on the server at URL before the file and dropped after it, so that
	// files written for a fresh server can share one.
	OwnDatabase bool
	// Verbose, if non-nil, receives each record as it runs.
	Verbose io.Writer
	// Timeout bounds each statement or query; 0 means no limit. A record
	// that times out fails, and its connection is dropped (the next record
	// reconnects).
	Timeout time.Duration
}

// Failure is one failed record.
type Failure struct {
	File    string
	Line    int    // 1-based line of the record's header
	SQL     string // the record's SQL, or "" for a directive
	Message string // what went wrong: expected vs actual
}

// String formats f as Run prints it: file:line, the SQL, then the message,
// indented.
func (f Failure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:\n", f.File, f.Line)
	if f.SQL != "" {
		b.WriteString(indent(f.SQL, "    "))
		b.WriteByte('\n')
	}
	b.WriteString(indent(f.Message, "    "))
	return b.String()
}

// Result counts the records of one file. Directives (halt, restart, sleep,
// ...) are not counted; records skipped by skipif or onlyif are.
type Result struct {
	File                    string
	Passed, Failed, Skipped int
	Failures                []Failure
}

// RunFile runs the test file at path against opts.URL. It continues after a
// failing record, so that one run reports every failure, and returns an
// error, with the counts so far, only when it cannot go on: the file does
// not parse, the server cannot be reached (or reconnected to after a
// connection broke), a restart fails, or ctx is done. Errors that stop a
// file after it started also appear as a Failure.
//
// Records run one at a time, in file order; each named connection is a
// separate session opened on first use. RunFile closes its connections
// before returning.
func RunFile(ctx context.Context, path string, opts Options) (Result, error) {
	r := &runner{opts: opts, url: opts.URL, conns: map[string]*pgconn.PgConn{},
		labels: map[string]labelled{}, res: Result{File: path}}
	defer r.closeAll()
	text, err := os.ReadFile(path)
	if err != nil {
		return r.res, err
	}
	records, err := parse(path, string(text))
	if err != nil {
		return r.res, err
	}
	for i := range records {
		rec := &records[i]
		if err := ctx.Err(); err != nil {
			return r.res, err
		}
		skip, err := r.skip(ctx, rec)
		if err != nil {
			return r.res, r.abort(rec, err)
		}
		if skip {
			if rec.kind == kindStatement || rec.kind == kindQuery {
				r.res.Skipped++
			}
			r.echo(rec, "skipped")
			continue
		}
		r.echo(rec, "")
		switch rec.kind {
		case kindHalt:
			return r.res, nil
		case kindSleep:
			select {
			case <-time.After(rec.sleep):
			case <-ctx.Done():
				return r.res, ctx.Err()
			}
		case kindRestart:
			if err := r.restart(ctx, r.opts.Restart); err != nil {
				return r.res, r.abort(rec, err)
			}
		case kindKill:
			if err := r.restart(ctx, r.opts.Kill); err != nil {
				return r.res, r.abort(rec, err)
			}
		case kindStatement, kindQuery:
			msg, err := r.run(ctx, rec)
			for attempt := 0; err == nil && msg != "" && attempt < rec.retries; attempt++ {
				select {
				case <-time.After(rec.backoff):
				case <-ctx.Done():
					return r.res, ctx.Err()
				}
				msg, err = r.run(ctx, rec)
			}
			if err != nil {
				return r.res, r.abort(rec, err)
			}
			if msg != "" {
				r.fail(rec, msg)
			} else {
				r.res.Passed++
			}
		}
	}
	return r.res, nil
}

// Run runs files in order, each with RunFile, and writes to out one line per
// file ("ok   path  12 passed" or "FAIL path  10 passed, 2 failed"), each
// failure (file:line, SQL, expected and actual), and a total line. It goes on
// to the next file after one that stopped early, and returns the results of
// every file it ran together with the errors that stopped files (joined), or
// ctx's error. The caller decides the exit status: a run passed if the error
// is nil and no Result has Failed > 0.
func Run(ctx context.Context, files []string, opts Options, out io.Writer) ([]Result, error) {
	width := 0
	for _, f := range files {
		width = max(width, len(f))
	}
	var (
		results []Result
		errs    []error
		total   Result
		failed  int
	)
	for _, file := range files {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		run := RunFile
		if opts.OwnDatabase {
			run = runInOwnDatabase
		}
		res, err := run(ctx, file, opts)
		results = append(results, res)
		total.Passed += res.Passed
		total.Failed += res.Failed
		total.Skipped += res.Skipped

		status := "ok  "
		if res.Failed > 0 || err != nil {
			status = "FAIL"
			failed++
		}
		fmt.Fprintf(out, "%s %-*s  %s\n", status, width, file, counts(res))
		for _, f := range res.Failures {
			fmt.Fprintf(out, "%s\n", indent(f.String(), "    "))
		}
		if err != nil {
			// Errors that stopped a started file are among its failures
			// already.
			if n := len(res.Failures); n == 0 || res.Failures[n-1].Message != stoppedMessage(err) {
				fmt.Fprintf(out, "    stopped: %v\n", err)
			}
			// Parse and open errors name the file already.
			var (
				parseErr *parseError
				pathErr  *fs.PathError
			)
			if !errors.As(err, &parseErr) && !errors.As(err, &pathErr) {
				err = fmt.Errorf("%s: %w", file, err)
			}
			errs = append(errs, err)
		}
	}
	status := "ok  "
	if failed > 0 || len(errs) > 0 {
		status = "FAIL"
	}
	fmt.Fprintf(out, "%s %d files, %d failed  %s\n", status, len(results), failed, counts(total))
	return results, errors.Join(errs...)
}

func counts(r Result) string {
	s := fmt.Sprintf("%d passed", r.Passed)
	if r.Failed > 0 {
		s += fmt.Sprintf(", %d failed", r.Failed)
	}
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	return s
}

func stoppedMessage(err error) string { return "stopped: " + err.Error() }

// Files expands command-line arguments into test files: a directory becomes
// every .slt file under it, recursively, in lexical order; an argument with
// glob metacharacters becomes its matches; anything else is taken as a file
// name. An argument that yields no file is an error.
func Files(args ...string) ([]string, error) {
	var files []string
	for _, arg := range args {
		var matches []string
		if strings.ContainsAny(arg, "*?[") {
			m, err := filepath.Glob(arg)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", arg, err)
			}
			matches = m
		} else {
			matches = []string{arg}
		}
		n := len(files)
		for _, m := range matches {
			fi, err := os.Stat(m)
			if err != nil {
				return nil, err
			}
			if !fi.IsDir() {
				files = append(files, m)
				continue
			}
			var found []string
			err = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() && strings.HasSuffix(path, ".slt") {
					found = append(found, path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			sort.Strings(found)
			files = append(files, found...)
		}
		if len(files) == n {
			return nil, fmt.Errorf("%s: no .slt files", arg)
		}
	}
	return files, nil
}

// runner runs the records of one file.
type runner struct {
	opts   Options
	url    string
	conns  map[string]*pgconn.PgConn // by connection name; "" is the default
	engine *string                   // the detected engine, once known
	labels map[string]labelled
	res    Result
}

// labelled is the result of the first query with a given label.
type labelled struct {
	line int
	key  string
}

func (r *runner) fail(rec *record, msg string) {
	r.res.Failed++
	r.res.Failures = append(r.res.Failures, Failure{File: r.res.File, Line: rec.line, SQL: rec.sql, Message: msg})
}

// abort records err, which stops the file, as a failure of rec and returns
// it.
func (r *runner) abort(rec *record, err error) error {
	r.fail(rec, stoppedMessage(err))
	return err
}

func (r *runner) echo(rec *record, note string) {
	if r.opts.Verbose == nil {
		return
	}
	head := rec.header
	if rec.connection != "" {
		head += " (connection " + rec.connection + ")"
	}
	if note != "" {
		head += " " + note
	}
	fmt.Fprintf(r.opts.Verbose, "%s:%d: %s\n", r.res.File, rec.line, head)
	if rec.sql != "" && note == "" {
		fmt.Fprintf(r.opts.Verbose, "%s\n", indent(rec.sql, "    "))
	}
}

// skip evaluates rec's skipif and onlyif conditions: the record runs only if
// every one holds.
func (r *runner) skip(ctx context.Context, rec *record) (bool, error) {
	if len(rec.conditions) == 0 {
		return false, nil
	}
	engine, err := r.engineName(ctx)
	if err != nil {
		return false, err
	}
	for _, c := range rec.conditions {
		if (c.engine == engine) != c.only {
			return true, nil
		}
	}
	return false, nil
}

// engineName returns Options.Engine or asks the server.
func (r *runner) engineName(ctx context.Context) (string, error) {
	if r.opts.Engine != "" {
		return strings.ToLower(r.opts.Engine), nil
	}
	if r.engine != nil {
		return *r.engine, nil
	}
	conn, err := r.conn(ctx, "")
	if err != nil {
		return "", err
	}
	engine := ""
	if strings.Contains(strings.ToLower(conn.ParameterStatus("server_version")), EngineStreamSQL) {
		engine = EngineStreamSQL
	} else if results, err := conn.Exec(ctx, "SELECT version()").ReadAll(); err == nil &&
		len(results) == 1 && len(results[0].Rows) == 1 && len(results[0].Rows[0]) == 1 {
		v := strings.ToLower(string(results[0].Rows[0][0]))
		switch {
		case strings.Contains(v, EngineStreamSQL):
			engine = EngineStreamSQL
		case strings.HasPrefix(v, EnginePostgreSQL):
			engine = EnginePostgreSQL
		}
	}
	if conn.IsClosed() {
		delete(r.conns, "")
	}
	r.engine = &engine
	if r.opts.Verbose != nil {
		fmt.Fprintf(r.opts.Verbose, "%s: engine %q\n", r.res.File, engine)
	}
	return engine, nil
}

// conn returns the named connection, connecting if needed.
func (r *runner) conn(ctx context.Context, name string) (*pgconn.PgConn, error) {
	if c := r.conns[name]; c != nil && !c.IsClosed() {
		return c, nil
	}
	c, err := pgconn.Connect(ctx, r.url)
	if err != nil {
		return nil, fmt.Errorf("connecting to the server: %w", err)
	}
	r.conns[name] = c
	return c, nil
}

func (r *runner) closeAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, c := range r.conns {
		_ = c.Close(ctx)
		delete(r.conns, name)
	}
}

func (r *runner) restart(ctx context.Context, restart func(context.Context) (string, error)) error {
	if restart == nil {
		return nil
	}
	r.closeAll()
	url, err := restart(ctx)
	if err != nil {
		return fmt.Errorf("restarting the server: %w", err)
	}
	if url != "" {
		r.url = url
	}
	return nil
}

// run executes a statement or query record. It returns a failure message
// ("" if the record passed), or an error if the runner cannot go on.
func (r *runner) run(ctx context.Context, rec *record) (string, error) {
	conn, err := r.conn(ctx, rec.connection)
	if err != nil {
		return "", err
	}
	execCtx := ctx
	if r.opts.Timeout > 0 {
		var cancel context.CancelFunc
		execCtx, cancel = context.WithTimeout(ctx, r.opts.Timeout)
		defer cancel()
	}
	results, err := execute(execCtx, conn, rec.sql)
	if conn.IsClosed() {
		delete(r.conns, rec.connection)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var pgErr *pgconn.PgError
	if err != nil && !errors.As(err, &pgErr) {
		if execCtx.Err() != nil {
			return fmt.Sprintf("timed out after %v", r.opts.Timeout), nil
		}
		return fmt.Sprintf("connection broken: %v", err), nil
	}

	if rec.wantError != nil {
		if pgErr == nil {
			return fmt.Sprintf("%s succeeded, expected %s", rec.kind, rec.wantError), nil
		}
		if !matchError(rec.wantError, pgErr) {
			return fmt.Sprintf("expected %s\nactual: %s", rec.wantError, describeError(pgErr)), nil
		}
		return "", nil
	}
	if pgErr != nil {
		return fmt.Sprintf("%s failed: %s", rec.kind, describeError(pgErr)), nil
	}

	if rec.kind == kindStatement {
		if rec.wantCount >= 0 {
			if len(results) == 0 {
				return fmt.Sprintf("expected count %d, got no command tag", rec.wantCount), nil
			}
			tag := results[len(results)-1].tag
			if got := tag.RowsAffected(); got != rec.wantCount {
				return fmt.Sprintf("expected count %d, got %d (%s)", rec.wantCount, got, tag), nil
			}
		}
		return "", nil
	}

	// A query's rows are those of the last statement that returned rows.
	var last *statementResult
	for i := range results {
		if results[i].returnsRows {
			last = &results[i]
		}
	}
	if last == nil {
		return "query returned no rows: it is not a query", nil
	}
	if last.columns != len(rec.types) {
		return fmt.Sprintf("query returned %d columns, but its types %q declare %d",
			last.columns, rec.types, len(rec.types)), nil
	}
	res := last.rows
	if rec.label != "" {
		key := res.key(rec.sort)
		if prev, ok := r.labels[rec.label]; !ok {
			r.labels[rec.label] = labelled{line: rec.line, key: key}
		} else if prev.key != key {
			return fmt.Sprintf("result differs from the query labelled %s at line %d", rec.label, prev.line), nil
		}
	}
	return compareResult(rec, res), nil
}

// statementResult is the outcome of one statement of a simple query.
type statementResult struct {
	returnsRows bool // the server described rows (possibly none)
	columns     int
	rows        queryResult // values formatted with formatValue
	tag         pgconn.CommandTag
}

// execute runs sql as one simple query and returns the result of each
// statement that completed, and the error that ended the query, if any.
func execute(ctx context.Context, conn *pgconn.PgConn, sql string) ([]statementResult, error) {
	mrr := conn.Exec(ctx, sql)
	var results []statementResult
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		fields := rr.FieldDescriptions()
		res := statementResult{returnsRows: fields != nil, columns: len(fields)}
		for rr.NextRow() {
			values := rr.Values()
			row := make([]string, len(values))
			for i, v := range values {
				row[i] = formatValue(v)
			}
			res.rows = append(res.rows, row)
		}
		var err error
		if res.tag, err = rr.Close(); err != nil {
			break // mrr.Close reports it
		}
		results = append(results, res)
	}
	return results, mrr.Close()
}

// matchError reports whether err satisfies want.
func matchError(want *errorExpectation, err *pgconn.PgError) bool {
	switch {
	case want.code != "":
		return err.Code == want.code
	case want.pattern != nil:
		return want.pattern.MatchString(err.Message)
	case want.text != "":
		return strings.Contains(normalize(err.Message), normalize(want.text))
	}
	return true
}

func describeError(err *pgconn.PgError) string {
	return fmt.Sprintf("%s: %s (SQLSTATE %s)", err.Severity, err.Message, err.Code)
}

var lineStart = regexp.MustCompile(`(?m)^`)

// indent prefixes every line of s.
func indent(s, prefix string) string { return lineStart.ReplaceAllString(s, prefix) }
