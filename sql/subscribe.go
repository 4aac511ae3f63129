package sql

import (
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// SUBSCRIBE is Materialize's changefeed statement, which PostgreSQL's
// grammar does not have:
//
//	SUBSCRIBE [TO] name | (query) [WITH (SNAPSHOT = bool, PROGRESS = bool)] [AS OF epoch]
//
// It appears on its own (rows stream until the client cancels), in
// DECLARE c CURSOR FOR SUBSCRIBE ... (read with FETCH, which takes
// Materialize's WITH (timeout = '1s')), and in COPY (SUBSCRIBE ...) TO
// STDOUT. Each is parsed here from the scanner's tokens; the query and the
// parts of the surrounding statement that are PostgreSQL's are parsed by
// PostgreSQL's parser from the text with everything else blanked, so that
// locations stay the statement's.

// Subscribe is a bound SUBSCRIBE.
type Subscribe struct {
	// View is the subscription's dataflow as a materialized view's
	// definition (with no name): the query, or SELECT * FROM name.
	View *ir.CreateMaterializedView
	// Snapshot: the changes start with the query's rows as of the first
	// epoch (default); without it, with the changes after that epoch.
	Snapshot bool
	// Progress adds a progress row after every committed epoch.
	Progress bool
	// AsOf is the epoch of AS OF, or 0 without it.
	AsOf uint64
	// From is the relation SUBSCRIBE names (nil for a query); Log is the
	// subscription (sql/subscription.go) whose retained changes are read
	// instead of running View: the one named, or with AS OF the one kept
	// on From (the engine chooses).
	From, Log *catalog.Relation
}

func (*Subscribe) Tag() string { return "SUBSCRIBE" }

// CopySubscribe is COPY (SUBSCRIBE ...) TO STDOUT [WITH (...)].
type CopySubscribe struct {
	Subscribe *Subscribe
	Format    CopyFormat
}

func (*CopySubscribe) Tag() string { return "COPY" }

// subscribeSyntax is a parsed SUBSCRIBE awaiting binding.
type subscribeSyntax struct {
	// query is SELECT ... or SELECT * FROM name, and name the name.
	query    *pg_query.Node
	name     *pg_query.RangeVar
	snapshot bool
	progress bool
	asOf     uint64
	// declare, for DECLARE ... CURSOR FOR SUBSCRIBE, is the DECLARE; copy,
	// for COPY (SUBSCRIBE ...), the COPY's options.
	declare *pg_query.DeclareCursorStmt
	copy    *pg_query.CopyStmt
}

func (*subscribeSyntax) Tag() string { return "SUBSCRIBE" }

// fetchSyntax is a FETCH with WITH options.
type fetchSyntax struct {
	fetch   *pg_query.FetchStmt
	timeout int64
}

func (*fetchSyntax) Tag() string { return "FETCH" }

// isSubscribe reports whether the tokens of a statement are a SUBSCRIBE,
// a DECLARE of a cursor for one, a COPY of one or a FETCH WITH options.
func isSubscribe(words []string) bool {
	switch {
	case len(words) >= 2 && words[0] == "subscribe":
		return true
	case len(words) >= 3 && words[0] == "copy" && words[1] == "(" && words[2] == "subscribe":
		return true
	case len(words) >= 4 && words[0] == "declare":
		for i := 1; i+1 < len(words); i++ {
			if words[i] == "for" && words[i+1] == "subscribe" {
				return true
			}
		}
	case len(words) >= 4 && (words[0] == "fetch" || words[0] == "move"):
		for i := 1; i+1 < len(words); i++ {
			if words[i] == "with" && words[i+1] == "(" {
				return true
			}
		}
	}
	return false
}

// parseSubscribe parses src, a statement isSubscribe accepted.
func parseSubscribe(src string) (ir.Statement, error) {
	res, err := pg_query.Scan(src)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%v", err)
	}
	var toks []*pg_query.ScanToken
	for _, t := range res.Tokens {
		if t.Token != pg_query.Token_SQL_COMMENT && t.Token != pg_query.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	p := &subParser{src: src, toks: toks}
	switch p.word(0) {
	case "subscribe":
		s, end, err := p.body(1)
		if err != nil {
			return nil, err
		}
		if end < len(toks) {
			return nil, p.syntaxAt(end)
		}
		return s, nil
	case "copy":
		return p.copy()
	case "declare":
		return p.declare()
	}
	return p.fetch()
}

type subParser struct {
	src  string
	toks []*pg_query.ScanToken
}

func (p *subParser) word(i int) string {
	if i >= len(p.toks) {
		return ""
	}
	return strings.ToLower(p.src[p.toks[i].Start:p.toks[i].End])
}

func (p *subParser) syntaxAt(i int) error {
	if i >= len(p.toks) {
		return sqlerr.New(sqlerr.SyntaxError, "syntax error at end of input")
	}
	e := sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", p.src[p.toks[i].Start:p.toks[i].End])
	e.Position = len([]rune(p.src[:p.toks[i].Start])) + 1
	return e
}

// parseBlanked parses the text of tokens [from, to) of src with everything
// else blanked and prefix written just before from (which must fit).
func (p *subParser) parseBlanked(prefix string, from, to int) (*pg_query.Node, error) {
	buf := []byte(strings.Repeat(" ", len(p.src)))
	start, end := int(p.toks[from].Start), len(p.src)
	if to < len(p.toks) {
		end = int(p.toks[to].Start)
	}
	copy(buf[start-len(prefix):], prefix)
	copy(buf[start:end], p.src[start:end])
	parsed, err := pg_query.Parse(string(buf))
	if err != nil {
		return nil, syntaxError(p.src, 0, err)
	}
	if len(parsed.Stmts) != 1 {
		return nil, p.syntaxAt(from)
	}
	return parsed.Stmts[0].Stmt, nil
}

// body parses what follows SUBSCRIBE at toks[i]; it returns the index after
// it.
func (p *subParser) body(i int) (*subscribeSyntax, int, error) {
	s := &subscribeSyntax{snapshot: true}
	if p.word(i) == "to" {
		i++
	}
	if i >= len(p.toks) {
		return nil, i, p.syntaxAt(i)
	}
	if p.toks[i].Token == pg_query.Token_ASCII_40 {
		close := p.matching(i)
		if close < 0 {
			return nil, i, p.syntaxAt(len(p.toks))
		}
		q, err := p.parseBlanked("", i+1, close)
		if err != nil {
			return nil, i, err
		}
		if q.GetSelectStmt() == nil {
			return nil, i, sqlerr.New(sqlerr.SyntaxError, "SUBSCRIBE needs a SELECT")
		}
		s.query, i = q, close+1
	} else {
		rv, j := sinkName(p.src, p.toks, i)
		if rv == nil {
			return nil, i, p.syntaxAt(i)
		}
		star, err := pg_query.Parse("SELECT * FROM x")
		if err != nil {
			return nil, i, err
		}
		sel := star.Stmts[0].Stmt.GetSelectStmt()
		sel.FromClause[0].Node = &pg_query.Node_RangeVar{RangeVar: rv}
		s.query, s.name, i = star.Stmts[0].Stmt, rv, j
	}
	if p.word(i) == "with" && p.word(i+1) == "(" {
		opts, end, err := withOptions(p.src, p.toks, i+2, "SUBSCRIBE")
		if err != nil {
			return nil, i, err
		}
		for k, v := range opts {
			b, ok := parseBool(v)
			switch {
			case k != "snapshot" && k != "progress":
				return nil, i, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized SUBSCRIBE option \"%s\"", k).
					WithHint("The options are SNAPSHOT and PROGRESS.")
			case !ok:
				return nil, i, sqlerr.New(sqlerr.InvalidParameterValue, "SUBSCRIBE option %s requires a Boolean value", strings.ToUpper(k))
			case k == "snapshot":
				s.snapshot = b
			default:
				s.progress = b
			}
		}
		i = end + 1
	}
	if p.word(i) == "as" && p.word(i+1) == "of" {
		if i+2 >= len(p.toks) || p.toks[i+2].Token != pg_query.Token_ICONST {
			return nil, i, p.syntaxAt(i + 2)
		}
		n, err := strconv.ParseUint(p.word(i+2), 10, 64)
		if err != nil || n == 0 {
			return nil, i, sqlerr.New(sqlerr.InvalidParameterValue, "AS OF needs a positive epoch")
		}
		s.asOf, i = n, i+3
	}
	return s, i, nil
}

func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "on", "t", "yes", "1":
		return true, true
	case "false", "off", "f", "no", "0":
		return false, true
	}
	return false, false
}

// matching returns the index of the parenthesis closing toks[i], or -1.
func (p *subParser) matching(i int) int {
	depth := 0
	for j := i; j < len(p.toks); j++ {
		switch p.toks[j].Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// copy parses COPY (SUBSCRIBE ...) TO STDOUT [options].
func (p *subParser) copy() (ir.Statement, error) {
	close := p.matching(1)
	if close < 0 {
		return nil, p.syntaxAt(len(p.toks))
	}
	s, end, err := p.body(3)
	if err != nil {
		return nil, err
	}
	if end != close {
		return nil, p.syntaxAt(end)
	}
	if close+1 >= len(p.toks) {
		return nil, p.syntaxAt(close + 1)
	}
	// The COPY's own clauses, after a query PostgreSQL parses.
	const stand = "COPY (SELECT 1)"
	n, err := p.parseBlanked(stand, close+1, len(p.toks))
	if err != nil {
		return nil, err
	}
	if s.copy = n.GetCopyStmt(); s.copy == nil {
		return nil, p.syntaxAt(close + 1)
	}
	return s, nil
}

// declare parses DECLARE name ... CURSOR ... FOR SUBSCRIBE ...
func (p *subParser) declare() (ir.Statement, error) {
	k := 1
	for ; k+1 < len(p.toks) && !(p.word(k) == "for" && p.word(k+1) == "subscribe"); k++ {
	}
	// PostgreSQL parses the DECLARE with a stand-in query after FOR.
	buf := p.src[:p.toks[k+1].Start] + "SELECT 1"
	parsed, err := pg_query.Parse(buf)
	if err != nil {
		return nil, syntaxError(p.src, 0, err)
	}
	d := parsed.Stmts[0].Stmt.GetDeclareCursorStmt()
	if d == nil {
		return nil, p.syntaxAt(0)
	}
	s, end, err := p.body(k + 2)
	if err != nil {
		return nil, err
	}
	if end < len(p.toks) {
		return nil, p.syntaxAt(end)
	}
	s.declare = d
	return s, nil
}

// fetch parses FETCH ... WITH (timeout = '...').
func (p *subParser) fetch() (ir.Statement, error) {
	with := lastWithOptions(p.toks, 1)
	if with < 0 {
		return nil, p.syntaxAt(1)
	}
	parsed, err := pg_query.Parse(p.src[:p.toks[with].Start])
	if err != nil {
		return nil, syntaxError(p.src, 0, err)
	}
	f := parsed.Stmts[0].Stmt.GetFetchStmt()
	if f == nil {
		return nil, p.syntaxAt(0)
	}
	opts, end, err := withOptions(p.src, p.toks, with+2, "FETCH")
	if err != nil {
		return nil, err
	}
	if end+1 < len(p.toks) {
		return nil, p.syntaxAt(end + 1)
	}
	s := &fetchSyntax{fetch: f, timeout: -1}
	for k, v := range opts {
		if k != "timeout" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized FETCH option \"%s\"", k).
				WithHint("The option is TIMEOUT.")
		}
		d, err := parseTimeout(v)
		if err != nil {
			return nil, err
		}
		s.timeout = d.Microseconds()
	}
	return s, nil
}

// parseTimeout reads a FETCH timeout: a Go duration ('1s', '250ms') or a
// number of seconds.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(strings.ReplaceAll(v, " ", ""))
	if err != nil || d < 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid FETCH timeout \"%s\"", v).
			WithHint("Write a duration such as '1s' or '250ms'.")
	}
	return d, nil
}

// bindSubscribe binds a parsed SUBSCRIBE, and the DECLARE or COPY around it.
func (b *binder) bindSubscribe(s *subscribeSyntax) (ir.Statement, error) {
	var from *catalog.Relation
	if s.name != nil {
		var err error
		if from, err = b.lookup(s.name); err != nil {
			return nil, err
		}
		if IsSubscription(from) {
			sub := &Subscribe{Snapshot: s.snapshot, Progress: s.progress, AsOf: s.asOf, From: from, Log: from}
			return b.wrapSubscribe(s, sub, len(from.VisibleColumns()), nil)
		}
	}
	rel, err := b.bindQuery(s.query.GetSelectStmt())
	if err != nil {
		return nil, err
	}
	if b.hasParams() {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "SUBSCRIBE may not use bound parameters")
	}
	if v := b.volatile; v != nil {
		return nil, b.errAt(v.loc, sqlerr.Unsupported("%s() in SUBSCRIBE (its value differs at each call)", v.fn))
	}
	if err := checkDuplicateNames(rel); err != nil {
		return nil, err
	}
	sub := &Subscribe{
		View:     &ir.CreateMaterializedView{Query: rel, SQL: b.text, Refs: b.refs},
		Snapshot: s.snapshot,
		Progress: s.progress,
		AsOf:     s.asOf,
		From:     from,
	}
	return b.wrapSubscribe(s, sub, len(ir.VisibleColumns(rel)), rel)
}

// wrapSubscribe returns sub, or the DECLARE or COPY around it; n is the
// number of its query's columns, rel its query (nil for a subscription's
// log).
func (b *binder) wrapSubscribe(s *subscribeSyntax, sub *Subscribe, n int, rel ir.Rel) (ir.Statement, error) {
	switch {
	case s.declare != nil:
		if s.declare.Options&cursorOptBinary != 0 {
			return nil, sqlerr.Unsupported("BINARY cursors")
		}
		return &DeclareCursor{Name: s.declare.Portalname, Hold: s.declare.Options&cursorOptHold != 0,
			NoScroll: true, Subscribe: sub}, nil
	case s.copy != nil:
		n += 2
		if s.progress {
			n++
		}
		for _, o := range s.copy.Options {
			if d := o.GetDefElem(); d != nil && strings.HasPrefix(d.Defname, "force_") {
				return nil, b.errAt(d.Location, sqlerr.Unsupported("COPY (SUBSCRIBE ...) option %s", strings.ToUpper(d.Defname)))
			}
		}
		f, err := b.copyFormat(s.copy.Options, n, rel, false)
		if err != nil {
			return nil, err
		}
		if f.Kind == CopyBinary {
			return nil, sqlerr.Unsupported("COPY (SUBSCRIBE ...) TO STDOUT in binary format")
		}
		return &CopySubscribe{Subscribe: sub, Format: f}, nil
	}
	return sub, nil
}

// bindFetchWith binds a FETCH with WITH options.
func bindFetchWith(s *fetchSyntax) *Fetch {
	f := bindFetch(s.fetch)
	f.Timeout = s.timeout
	return f
}
