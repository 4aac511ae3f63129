package sql

import (
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// Retained history is Materialize's RETAIN HISTORY: a table or
// materialized view keeps the log of its changes for a while, which
// SUBSCRIBE ... AS OF reads.
//
//	CREATE TABLE t (...) WITH (retain_history = '1h')
//	CREATE MATERIALIZED VIEW v WITH (retain_history = '1h') AS ...
//	ALTER TABLE | MATERIALIZED VIEW v SET (retain_history = '30m')
//	ALTER TABLE | MATERIALIZED VIEW v RESET (retain_history)
//
// Without the option (or after RESET) the relation keeps the server's
// default; retain_history = 0 (or 'off') keeps none.

// RetainHistoryOption is the relation option, kept in the relation's
// Options as written.
const RetainHistoryOption = "retain_history"

// ParseRetainHistory reads a retain_history value: 0, 'off' or 'false'
// (none), or a retention (ParseRetention).
func ParseRetainHistory(v string) (time.Duration, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "off", "false", "none":
		return 0, nil
	}
	d, err := ParseRetention(v)
	if err != nil {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid retain_history \"%s\"", v).
			WithHint("Write a duration such as '1h', '30m' or '7d', or 0 for none.")
	}
	return d, nil
}

// AlterRetainHistory is ALTER TABLE | MATERIALIZED VIEW rel SET
// (retain_history = Value), or with Reset RESET (retain_history).
type AlterRetainHistory struct {
	Rel   *catalog.Relation
	Value string
	Reset bool
	tag   string
}

func (s *AlterRetainHistory) Tag() string { return s.tag }

// relOptionValue renders a reloption's value as written.
func relOptionValue(d *pg_query.DefElem) string {
	if f := d.Arg.GetFloat(); f != nil {
		return f.Fval
	}
	return defElemString(d)
}

// retainHistoryOf returns the retain_history value among a CREATE's
// reloptions ("" if absent), checked. The other reloptions are left alone,
// as before (PostgreSQL's storage parameters mean nothing here).
func (b *binder) retainHistoryOf(opts []*pg_query.Node) (string, error) {
	v := ""
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defname != RetainHistoryOption {
			continue
		}
		v = relOptionValue(d)
		if _, err := ParseRetainHistory(v); err != nil {
			return "", b.errAt(d.Location, sqlerr.Wrap(err))
		}
	}
	return v, nil
}

// bindAlterRelOptions binds ALTER ... SET (options) and RESET (options):
// retain_history is the only option.
func (b *binder) bindAlterRelOptions(s *pg_query.AlterTableStmt, cmd *pg_query.AlterTableCmd) (ir.Statement, error) {
	rel, err := b.alterTarget(s.Relation, s.Objtype)
	if err != nil {
		return nil, err
	}
	if rel.Kind != catalog.Table && rel.Kind != catalog.MaterializedView {
		return nil, b.errAt(s.Relation.Location, sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a table or materialized view", rel.Name))
	}
	st := &AlterRetainHistory{Rel: rel, Reset: cmd.Subtype == pg_query.AlterTableType_AT_ResetRelOptions, tag: alterTag(s.Objtype)}
	opts := cmd.Def.GetList().GetItems()
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defname != RetainHistoryOption {
			name := ""
			if d != nil {
				name = d.Defname
			}
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized parameter \"%s\"", name).
				WithHint("The parameter is retain_history.")
		}
		if st.Reset {
			continue
		}
		st.Value = relOptionValue(d)
		if _, err := ParseRetainHistory(st.Value); err != nil {
			return nil, b.errAt(d.Location, sqlerr.Wrap(err))
		}
	}
	if len(opts) == 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "%s needs (retain_history ...)", st.tag)
	}
	return st, nil
}
