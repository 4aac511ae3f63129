package slt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// recordKind says what a record does.
type recordKind int

const (
	kindStatement recordKind = iota
	kindQuery
	kindHalt
	kindRestart
	kindKill
	kindSleep
)

func (k recordKind) String() string {
	switch k {
	case kindStatement:
		return "statement"
	case kindQuery:
		return "query"
	case kindHalt:
		return "halt"
	case kindRestart:
		return "restart"
	case kindKill:
		return "kill"
	case kindSleep:
		return "sleep"
	}
	return fmt.Sprintf("recordKind(%d)", int(k))
}

// sortMode says how query results are ordered before comparison.
type sortMode int

const (
	noSort sortMode = iota
	rowSort
	valueSort
)

func (m sortMode) String() string {
	switch m {
	case rowSort:
		return "rowsort"
	case valueSort:
		return "valuesort"
	}
	return "nosort"
}

func parseSortMode(s string) (sortMode, bool) {
	switch s {
	case "nosort":
		return noSort, true
	case "rowsort":
		return rowSort, true
	case "valuesort":
		return valueSort, true
	}
	return 0, false
}

// condition is one skipif (only == false) or onlyif line.
type condition struct {
	only   bool
	engine string
}

// errorExpectation is what a statement error or query error record expects.
type errorExpectation struct {
	code    string         // a SQLSTATE, or ""
	pattern *regexp.Regexp // matched against the message, or nil
	text    string         // literal text the message must contain (the ---- block), or ""
}

// String describes the expectation for failure messages.
func (e *errorExpectation) String() string {
	switch {
	case e.code != "":
		return "an error with SQLSTATE " + e.code
	case e.pattern != nil:
		return fmt.Sprintf("an error matching %q", e.pattern.String())
	case e.text != "":
		return fmt.Sprintf("an error containing %q", e.text)
	}
	return "an error"
}

// record is one parsed record or directive of a file.
type record struct {
	kind       recordKind
	line       int    // 1-based line of the header
	header     string // the header as written: "statement ok", "query IT rowsort", "halt", ...
	conditions []condition
	connection string // the named connection to run on, or "" for the default one

	sql       string
	wantError *errorExpectation // non-nil for statement error and query error
	wantCount int64             // statement count N; -1 otherwise

	// Queries.
	types    string   // one letter per column
	sort     sortMode // the header's, or the file's default
	label    string
	expected []string // the lines after ----, as written

	// retries and backoff: a query whose result differs is run again up to
	// retries times, backoff apart (results that streaming views reach
	// eventually, such as a source's rows).
	retries int
	backoff time.Duration

	sleep time.Duration
}

// sqlstatePattern matches a 5-character SQLSTATE. Requiring a digit keeps
// five-letter regexps such as "ERROR" from being taken for codes; every
// standard and PostgreSQL SQLSTATE has one.
var sqlstatePattern = regexp.MustCompile(`^[0-9A-Z]{5}$`)

func isSQLSTATE(s string) bool {
	return sqlstatePattern.MatchString(s) && strings.ContainsAny(s, "0123456789")
}

var typesPattern = regexp.MustCompile(`^[A-Za-z]+$`)

// parseError is a syntax error in a test file.
type parseError struct {
	file string
	line int
	msg  string
}

func (e *parseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg) }

// parse splits the text of a test file into records. file names the file in
// errors.
func parse(file, text string) ([]record, error) {
	p := parser{file: file, lines: strings.Split(text, "\n")}
	for i, l := range p.lines {
		p.lines[i] = strings.TrimSuffix(l, "\r")
	}
	return p.parse()
}

type parser struct {
	file  string
	lines []string
	pos   int // index of the next line to read
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &parseError{file: p.file, line: line, msg: fmt.Sprintf(format, args...)}
}

func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

func isComment(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "#") }

// afterFields returns line with its first n whitespace-separated fields
// removed, trimmed.
func afterFields(line string, n int) string {
	s := strings.TrimSpace(line)
	for ; n > 0; n-- {
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			return ""
		}
		s = strings.TrimSpace(s[i:])
	}
	return s
}

func (p *parser) parse() ([]record, error) {
	var (
		records    []record
		conditions []condition
		connection string
		pendingAt  int // line of the first pending skipif/onlyif/connection
		defaultSrt = noSort
	)
	for p.pos < len(p.lines) {
		raw := p.lines[p.pos]
		lineNo := p.pos + 1
		p.pos++
		if isBlank(raw) || isComment(raw) {
			continue
		}
		f := strings.Fields(raw)
		rec := record{line: lineNo, header: strings.TrimSpace(raw), wantCount: -1}
		switch f[0] {
		case "skipif", "onlyif":
			if len(f) != 2 {
				return nil, p.errorf(lineNo, "%s takes one engine name", f[0])
			}
			if pendingAt == 0 {
				pendingAt = lineNo
			}
			conditions = append(conditions, condition{only: f[0] == "onlyif", engine: strings.ToLower(f[1])})
			continue
		case "connection":
			if len(f) != 2 {
				return nil, p.errorf(lineNo, "connection takes one name")
			}
			if pendingAt == 0 {
				pendingAt = lineNo
			}
			connection = f[1]
			if connection == defaultConnection {
				connection = ""
			}
			continue
		case "hash-threshold", "control", "subtest":
			if pendingAt != 0 {
				return nil, p.errorf(pendingAt, "skipif, onlyif and connection cannot apply to %s", f[0])
			}
			if f[0] == "hash-threshold" {
				if len(f) != 2 {
					return nil, p.errorf(lineNo, "hash-threshold takes a number")
				}
				if _, err := strconv.Atoi(f[1]); err != nil {
					return nil, p.errorf(lineNo, "hash-threshold takes a number, not %q", f[1])
				}
			}
			if f[0] == "control" && len(f) == 3 && f[1] == "sortmode" {
				m, ok := parseSortMode(f[2])
				if !ok {
					return nil, p.errorf(lineNo, "unknown sort mode %q", f[2])
				}
				defaultSrt = m
			}
			continue
		case "halt", "restart", "kill":
			if len(f) != 1 {
				return nil, p.errorf(lineNo, "%s takes no arguments", f[0])
			}
			switch f[0] {
			case "halt":
				rec.kind = kindHalt
			case "restart":
				rec.kind = kindRestart
			default:
				rec.kind = kindKill
			}
		case "sleep":
			if len(f) != 2 {
				return nil, p.errorf(lineNo, "sleep takes a duration such as 500ms")
			}
			d, err := time.ParseDuration(f[1])
			if err != nil || d < 0 {
				return nil, p.errorf(lineNo, "sleep takes a duration such as 500ms, not %q", f[1])
			}
			rec.kind, rec.sleep = kindSleep, d
		case "statement":
			if err := p.parseStatement(&rec, raw, f); err != nil {
				return nil, err
			}
		case "query":
			rec.sort = defaultSrt
			if err := p.parseQuery(&rec, raw, f); err != nil {
				return nil, err
			}
		default:
			return nil, p.errorf(lineNo, "unknown record type %q (want statement, query, skipif, onlyif, connection, halt, restart, kill, sleep, hash-threshold or control)", f[0])
		}
		if connection != "" && rec.kind != kindStatement && rec.kind != kindQuery {
			return nil, p.errorf(pendingAt, "connection applies only to statement and query records")
		}
		rec.conditions, rec.connection = conditions, connection
		conditions, connection, pendingAt = nil, "", 0
		records = append(records, rec)
	}
	if pendingAt != 0 {
		return nil, p.errorf(pendingAt, "skipif, onlyif or connection with no record after it")
	}
	return records, nil
}

func (p *parser) parseStatement(rec *record, raw string, f []string) error {
	rec.kind = kindStatement
	if len(f) < 2 {
		return p.errorf(rec.line, "statement needs ok, error or count")
	}
	switch f[1] {
	case "ok":
		if len(f) != 2 {
			return p.errorf(rec.line, "statement ok takes no arguments")
		}
	case "count":
		if len(f) != 3 {
			return p.errorf(rec.line, "statement count takes a number")
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n < 0 {
			return p.errorf(rec.line, "statement count takes a number, not %q", f[2])
		}
		rec.wantCount = n
	case "error":
		e, err := p.errorExpectation(rec.line, afterFields(raw, 2))
		if err != nil {
			return err
		}
		rec.wantError = e
	default:
		return p.errorf(rec.line, "statement needs ok, error or count, not %q", f[1])
	}
	sawSeparator, err := p.readSQL(rec)
	if err != nil {
		return err
	}
	if sawSeparator {
		if rec.wantError == nil {
			return p.errorf(rec.line, "---- after a statement that expects no error")
		}
		return p.readErrorText(rec)
	}
	return nil
}

func (p *parser) parseQuery(rec *record, raw string, f []string) error {
	rec.kind = kindQuery
	if len(f) < 2 {
		return p.errorf(rec.line, "query needs column types (such as IT) or error")
	}
	if f[1] == "error" {
		e, err := p.errorExpectation(rec.line, afterFields(raw, 2))
		if err != nil {
			return err
		}
		rec.wantError = e
		sawSeparator, err := p.readSQL(rec)
		if err != nil {
			return err
		}
		if sawSeparator {
			return p.readErrorText(rec)
		}
		return nil
	}
	if !typesPattern.MatchString(f[1]) {
		return p.errorf(rec.line, "query column types must be letters, one per column (such as IT), not %q", f[1])
	}
	rec.types = f[1]
	// Then, in order, optional: a sort mode, a label, "retry N backoff D".
	rest := f[2:]
	for k := 0; k+1 < len(rest); k++ {
		if rest[k] != "retry" {
			continue
		}
		n, err := strconv.Atoi(rest[k+1])
		if err != nil || n < 1 {
			return p.errorf(rec.line, "retry takes a positive count, not %q", rest[k+1])
		}
		rec.retries, rec.backoff = n, 100*time.Millisecond
		tail := rest[k+2:]
		if len(tail) >= 2 && tail[0] == "backoff" {
			d, err := time.ParseDuration(tail[1])
			if err != nil || d <= 0 {
				return p.errorf(rec.line, "backoff takes a duration such as 100ms, not %q", tail[1])
			}
			rec.backoff = d
			tail = tail[2:]
		}
		if len(tail) > 0 {
			return p.errorf(rec.line, "unexpected %q after retry", tail[0])
		}
		rest = rest[:k]
		break
	}
	if len(rest) > 0 {
		m, ok := parseSortMode(rest[0])
		if !ok {
			return p.errorf(rec.line, "unknown sort mode %q (want nosort, rowsort or valuesort)", rest[0])
		}
		rec.sort = m
	}
	if len(rest) > 1 {
		rec.label = rest[1]
	}
	if len(rest) > 2 {
		return p.errorf(rec.line, "unexpected %q after the query label", rest[2])
	}
	sawSeparator, err := p.readSQL(rec)
	if err != nil {
		return err
	}
	if sawSeparator {
		for p.pos < len(p.lines) && !isBlank(p.lines[p.pos]) {
			rec.expected = append(rec.expected, p.lines[p.pos])
			p.pos++
		}
	}
	return nil
}

// errorExpectation parses the text after "error" in a header.
func (p *parser) errorExpectation(line int, s string) (*errorExpectation, error) {
	e := &errorExpectation{}
	switch {
	case s == "":
	case isSQLSTATE(s):
		e.code = s
	default:
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, p.errorf(line, "bad error pattern: %v", err)
		}
		e.pattern = re
	}
	return e, nil
}

// readSQL reads the SQL lines of rec, up to a blank line or ----, and
// reports whether it stopped at ----.
func (p *parser) readSQL(rec *record) (sawSeparator bool, err error) {
	var sql []string
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if isBlank(l) {
			break
		}
		p.pos++
		if strings.TrimSpace(l) == "----" {
			sawSeparator = true
			break
		}
		if isComment(l) {
			continue
		}
		sql = append(sql, l)
	}
	if len(sql) == 0 {
		return false, p.errorf(rec.line, "%s record has no SQL", rec.kind)
	}
	rec.sql = strings.Join(sql, "\n")
	return sawSeparator, nil
}

// readErrorText reads the expected error message after the ---- of an error
// record, up to a blank line.
func (p *parser) readErrorText(rec *record) error {
	var text []string
	for p.pos < len(p.lines) && !isBlank(p.lines[p.pos]) {
		text = append(text, strings.TrimSpace(p.lines[p.pos]))
		p.pos++
	}
	if len(text) == 0 {
		return p.errorf(rec.line, "---- with no expected error text after it")
	}
	if rec.wantError.code != "" || rec.wantError.pattern != nil {
		return p.errorf(rec.line, "an error record takes either a pattern on its header line or the text after ----, not both")
	}
	rec.wantError.text = strings.Join(text, "\n")
	return nil
}
