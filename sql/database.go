package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// CreateDatabase is CREATE DATABASE name.
type CreateDatabase struct {
	Name string
}

func (*CreateDatabase) Tag() string { return "CREATE DATABASE" }

// DropDatabase is DROP DATABASE [IF EXISTS] name [WITH (FORCE)].
type DropDatabase struct {
	Name     string
	IfExists bool
	// Force drops the database even while other sessions use it; their
	// next statements fail.
	Force bool
}

func (*DropDatabase) Tag() string { return "DROP DATABASE" }

// bindCreateDatabase accepts the options that change nothing for streamsql
// (its only encoding is UTF8, its databases have no templates or owners
// that matter) and refuses the others.
func (b *binder) bindCreateDatabase(s *pg_query.CreatedbStmt) (ir.Statement, error) {
	for _, o := range s.Options {
		d := o.GetDefElem()
		switch d.Defname {
		case "owner", "template", "connection_limit", "is_template", "allow_connections", "tablespace", "strategy", "oid":
		case "encoding", "lc_collate", "lc_ctype", "locale":
			if v := defElemString(d); v != "" && !utf8Like(d.Defname, v) {
				return nil, b.errAt(d.Location, sqlerr.Unsupported("%s %s (databases are UTF8 with C collation)", strings.ToUpper(d.Defname), v))
			}
		default:
			return nil, b.errAt(d.Location, sqlerr.New(sqlerr.SyntaxError, "option \"%s\" not recognized", d.Defname))
		}
	}
	return &CreateDatabase{Name: s.Dbname}, nil
}

// utf8Like reports whether an encoding or locale option names what
// streamsql databases are anyway.
func utf8Like(opt, v string) bool {
	v = strings.ToLower(strings.ReplaceAll(v, "-", ""))
	if opt == "encoding" {
		return v == "utf8" || v == "unicode"
	}
	return v == "c" || v == "posix" || strings.HasSuffix(v, ".utf8") || v == "c.utf8"
}

func (b *binder) bindDropDatabase(s *pg_query.DropdbStmt) (ir.Statement, error) {
	st := &DropDatabase{Name: s.Dbname, IfExists: s.MissingOk}
	for _, o := range s.Options {
		d := o.GetDefElem()
		if d.Defname != "force" {
			return nil, b.errAt(d.Location, sqlerr.New(sqlerr.SyntaxError, "unrecognized DROP DATABASE option \"%s\"", d.Defname))
		}
		st.Force = true
	}
	return st, nil
}
