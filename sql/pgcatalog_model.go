package sql

import (
	"fmt"
	"regexp"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// This file is the model of streamsql's catalog in PostgreSQL's terms that
// both the pg_catalog relations (engine/pgcatalog.go) and the catalog
// functions (funcs_catalog.go) are computed from, so that they agree.

// PgType is one row of pg_type: a type streamsql has, or one the catalog
// relations' columns are declared with.
type PgType struct {
	OID      int64
	Name     string // typname
	Display  string // format_type without a typmod
	Len      int16
	Category string
	Elem     int64 // element type of an array type, else 0
	Array    int64 // array type of the type, else 0
}

// PgTypes are the built-in types, in OID order.
var PgTypes = []PgType{
	{16, "bool", "boolean", 1, "B", 0, 1000},
	{17, "bytea", "bytea", -1, "U", 0, 1001},
	{18, "char", `"char"`, 1, "Z", 0, 1002},
	{19, "name", "name", 64, "S", 0, 1003},
	{20, "int8", "bigint", 8, "N", 0, 1016},
	{21, "int2", "smallint", 2, "N", 0, 1005},
	{22, "int2vector", "int2vector", -1, "A", 21, 1006},
	{23, "int4", "integer", 4, "N", 0, 1007},
	{24, "regproc", "regproc", 4, "N", 0, 1008},
	{25, "text", "text", -1, "S", 0, 1009},
	{26, "oid", "oid", 4, "N", 0, 1028},
	{30, "oidvector", "oidvector", -1, "A", 26, 1013},
	{114, "json", "json", -1, "U", 0, 199},
	{199, "_json", "json[]", -1, "A", 114, 0},
	{700, "float4", "real", 4, "N", 0, 1021},
	{701, "float8", "double precision", 8, "N", 0, 1022},
	{1000, "_bool", "boolean[]", -1, "A", 16, 0},
	{1001, "_bytea", "bytea[]", -1, "A", 17, 0},
	{1002, "_char", `"char"[]`, -1, "A", 18, 0},
	{1003, "_name", "name[]", -1, "A", 19, 0},
	{1005, "_int2", "smallint[]", -1, "A", 21, 0},
	{1006, "_int2vector", "int2vector[]", -1, "A", 22, 0},
	{1007, "_int4", "integer[]", -1, "A", 23, 0},
	{1008, "_regproc", "regproc[]", -1, "A", 24, 0},
	{1009, "_text", "text[]", -1, "A", 25, 0},
	{1013, "_oidvector", "oidvector[]", -1, "A", 30, 0},
	{1014, "_bpchar", "character[]", -1, "A", 1042, 0},
	{1015, "_varchar", "character varying[]", -1, "A", 1043, 0},
	{1016, "_int8", "bigint[]", -1, "A", 20, 0},
	{1021, "_float4", "real[]", -1, "A", 700, 0},
	{1022, "_float8", "double precision[]", -1, "A", 701, 0},
	{1028, "_oid", "oid[]", -1, "A", 26, 0},
	{1042, "bpchar", "character", -1, "S", 0, 1014},
	{1043, "varchar", "character varying", -1, "S", 0, 1015},
	{1082, "date", "date", 4, "D", 0, 1182},
	{1114, "timestamp", "timestamp without time zone", 8, "D", 0, 1115},
	{1115, "_timestamp", "timestamp without time zone[]", -1, "A", 1114, 0},
	{1182, "_date", "date[]", -1, "A", 1082, 0},
	{1184, "timestamptz", "timestamp with time zone", 8, "D", 0, 1185},
	{1185, "_timestamptz", "timestamp with time zone[]", -1, "A", 1184, 0},
	{1186, "interval", "interval", 16, "T", 0, 1187},
	{1187, "_interval", "interval[]", -1, "A", 1186, 0},
	{1231, "_numeric", "numeric[]", -1, "A", 1700, 0},
	{1700, "numeric", "numeric", -1, "N", 0, 1231},
	{2205, "regclass", "regclass", 4, "N", 0, 2210},
	{2206, "regtype", "regtype", 4, "N", 0, 2211},
	{2210, "_regclass", "regclass[]", -1, "A", 2205, 0},
	{2211, "_regtype", "regtype[]", -1, "A", 2206, 0},
	{2249, "record", "record", -1, "P", 0, 2287},
	{2287, "_record", "record[]", -1, "A", 2249, 0},
	{2950, "uuid", "uuid", 16, "U", 0, 2951},
	{2951, "_uuid", "uuid[]", -1, "A", 2950, 0},
	{3802, "jsonb", "jsonb", -1, "U", 0, 3807},
	{3807, "_jsonb", "jsonb[]", -1, "A", 3802, 0},
	{4089, "regnamespace", "regnamespace", 4, "N", 0, 4090},
	{4090, "_regnamespace", "regnamespace[]", -1, "A", 4089, 0},
}

// pgTypeByOID returns the built-in type with OID oid.
func pgTypeByOID(oid int64) (PgType, bool) {
	for _, t := range PgTypes {
		if t.OID == oid {
			return t, true
		}
	}
	return PgType{}, false
}

// pgTypeByName returns the built-in type named name (typname or
// format_type's spelling).
func pgTypeByName(name string) (PgType, bool) {
	name = strings.TrimPrefix(strings.ToLower(name), "pg_catalog.")
	for _, t := range PgTypes {
		if t.Name == name || t.Display == name {
			return t, true
		}
	}
	if t, ok := types.FromName(name, nil); ok {
		return pgTypeByOID(ColumnTypeOID(t))
	}
	return PgType{}, false
}

// ColumnTypeOID is the pg_attribute.atttypid of a column of type t, the
// OID it has on the wire (char(n) is varchar(n) in streamsql).
func ColumnTypeOID(t types.T) int64 { return int64(t.OID()) }

// FormatType is format_type(oid, typmod): PostgreSQL's spelling of a type
// with its modifier (typmod -1 or NULL: none).
func FormatType(oid int64, typmod int64, hasTypmod bool) string {
	t, ok := pgTypeByOID(oid)
	if !ok {
		return "???"
	}
	if !hasTypmod || typmod < 0 {
		return t.Display
	}
	switch oid {
	case types.OIDVarchar, types.OIDBpchar:
		return fmt.Sprintf("%s(%d)", t.Display, typmod-4)
	case types.OIDNumeric:
		m := typmod - 4
		return fmt.Sprintf("numeric(%d,%d)", m>>16, m&0xffff)
	}
	return t.Display
}

// PgClassEntry is one row of pg_class: a relation, a secondary index, or
// the index a declared primary key is shown as.
type PgClassEntry struct {
	OID    int64
	Schema string
	Name   string
	// Kind is relkind: r (table), v (view), m (materialized view), i
	// (index), f (source).
	Kind string
	Rel  *catalog.Relation
	// Index is the secondary index of Rel the entry is, or nil; PrimaryKey
	// marks the primary key's index.
	Index      *catalog.Index
	PrimaryKey bool
}

// PgClassEntries lists what pg_class shows of database cat: its tables,
// views, materialized views, sources and indexes, and the system tables.
// Sinks are not relations one can read and are left out.
func PgClassEntries(cat *catalog.Catalog) []PgClassEntry {
	var out []PgClassEntry
	db := cat.DatabaseName()
	for _, r := range cat.All() {
		if r.Database != db && r.Kind != catalog.SystemTable {
			continue
		}
		kind := ""
		switch r.Kind {
		case catalog.Table, catalog.SystemTable:
			kind = "r"
		case catalog.View:
			kind = "v"
		case catalog.MaterializedView:
			kind = "m"
		case catalog.Source:
			kind = "f"
		default:
			continue
		}
		if r.Kind == catalog.SystemTable && r.Schema == catalog.InformationSchema {
			kind = "v"
		}
		out = append(out, PgClassEntry{OID: r.OID(), Schema: r.Schema, Name: r.Name, Kind: kind, Rel: r})
		if r.Kind == catalog.Table && r.PrimaryKey {
			name := r.PrimaryKeyName
			if name == "" {
				name = r.Name + "_pkey"
			}
			out = append(out, PgClassEntry{OID: r.PrimaryKeyOID(), Schema: r.Schema, Name: name, Kind: "i", Rel: r, PrimaryKey: true})
		}
		for i := range r.Indexes {
			x := &r.Indexes[i]
			out = append(out, PgClassEntry{OID: x.OID(), Schema: r.Schema, Name: x.Name, Kind: "i", Rel: r, Index: x})
		}
	}
	return out
}

// IndexColumns are the table columns an index entry keys (the primary key's
// for PrimaryKey), with their DESC flags.
func (e *PgClassEntry) IndexColumns() ([]int, []bool) {
	if e.PrimaryKey {
		return e.Rel.Key, nil
	}
	return e.Index.Columns, e.Index.Desc
}

// Unique reports whether an index entry refuses duplicates: a primary
// key, a UNIQUE constraint or a unique index.
func (e *PgClassEntry) Unique() bool {
	return e.PrimaryKey || e.Index != nil && e.Index.Unique
}

// IndexDef is pg_get_indexdef of an index entry: the CREATE INDEX statement
// that makes it, as PostgreSQL prints it.
func (e *PgClassEntry) IndexDef() string {
	cols, desc := e.IndexColumns()
	var sb strings.Builder
	sb.WriteString("CREATE ")
	if e.Unique() {
		sb.WriteString("UNIQUE ")
	}
	fmt.Fprintf(&sb, "INDEX %s ON %s.%s USING btree (", QuoteIdent(e.Name), QuoteIdent(e.Schema), QuoteIdent(e.Rel.Name))
	for i, c := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(QuoteIdent(e.Rel.Columns[c].Name))
		if i < len(desc) && desc[i] {
			sb.WriteString(" DESC")
		}
	}
	sb.WriteString(")")
	if e.Index != nil && len(e.Index.Include) > 0 {
		sb.WriteString(" INCLUDE (")
		for i, c := range e.Index.Include {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(QuoteIdent(e.Rel.Columns[c].Name))
		}
		sb.WriteString(")")
	}
	return sb.String()
}

// PrimaryKeyDef is pg_get_constraintdef of a table's primary key.
func PrimaryKeyDef(r *catalog.Relation) string {
	names := make([]string, len(r.Key))
	for i, c := range r.Key {
		names[i] = QuoteIdent(r.Columns[c].Name)
	}
	return "PRIMARY KEY (" + strings.Join(names, ", ") + ")"
}

// ViewQuery is pg_get_viewdef of a view or materialized view: the query of
// its defining statement as it was written, after AS, each relation it
// names qualified with its schema (so that it means the same under any
// search path, as pg_dump needs), with a leading space and a closing
// semicolon as PostgreSQL prints it.
func ViewQuery(cat *catalog.Catalog, r *catalog.Relation) string {
	sqlText := qualifiedRefs(cat, r)
	q := sqlText
	if scan, err := pg_query.Scan(sqlText); err == nil {
		depth := 0
		toks := scan.GetTokens()
		for i, t := range toks {
			switch t.Token {
			case '(':
				depth++
			case ')':
				depth--
			case pg_query.Token_AS:
				if depth == 0 && i+1 < len(toks) {
					switch toks[i+1].Token {
					case pg_query.Token_SELECT, pg_query.Token_WITH, pg_query.Token_VALUES, pg_query.Token_TABLE, '(':
						q = sqlText[toks[i+1].Start:]
					}
				}
			}
			if q != sqlText {
				break
			}
		}
	}
	q = strings.TrimRight(strings.TrimSpace(q), ";")
	q = withData.ReplaceAllString(q, "")
	return " " + q + ";"
}

// withData matches the WITH [NO] DATA clause ending a CREATE MATERIALIZED
// VIEW statement.
var withData = regexp.MustCompile(`(?i)\s+WITH\s+(NO\s+)?DATA\s*$`)

// qualifiedRefs returns r's defining statement with the name of every
// relation it names (r.Refs) replaced by the relation's qualified name.
func qualifiedRefs(cat *catalog.Catalog, r *catalog.Relation) string {
	if len(r.Refs) == 0 {
		return r.SQL
	}
	scan, err := pg_query.Scan(r.SQL)
	if err != nil {
		return r.SQL
	}
	toks := scan.GetTokens()
	names := map[int32]string{}
	for _, ref := range r.Refs {
		if rel := cat.ByID(ref.ID); rel != nil {
			names[ref.Loc] = QuoteIdent(rel.Schema) + "." + QuoteIdent(rel.Name)
		}
	}
	var sb strings.Builder
	last := 0
	for i := 0; i < len(toks); i++ {
		name, ok := names[toks[i].Start]
		if !ok || int(toks[i].Start) < last {
			continue
		}
		// The name as written: identifiers separated by dots.
		j := i
		for j+2 < len(toks) && toks[j+1].Token == '.' && toks[j+1].Start == toks[j].End && toks[j+2].Start == toks[j+1].End {
			j += 2
		}
		sb.WriteString(r.SQL[last:toks[i].Start])
		sb.WriteString(name)
		last = int(toks[j].End)
		i = j
	}
	sb.WriteString(r.SQL[last:])
	return sb.String()
}

// PgNamespaceOID is the OID of the schema named name in cat, or 0.
func PgNamespaceOID(cat *catalog.Catalog, name string) int64 {
	if s := cat.Schema(name); s != nil {
		return s.OID()
	}
	return 0
}

// pgClassOID and pgNamespaceCatalogOID are the OIDs of pg_class and
// pg_namespace, the classoid of pg_description's rows on relations and
// schemas.
const (
	pgClassOID            = 1259
	pgNamespaceCatalogOID = 2615
)

// Description is a row of pg_description: the comment Text on object OID
// of catalog ClassOID, on its column SubID (0: the object itself).
type Description struct {
	OID, ClassOID, SubID int64
	Text                 string
}

// Descriptions lists the comments of database cat (COMMENT ON): the
// relations' and their visible columns' (numbered as pg_attribute's
// attnum), and the public schema's, as pg_description shows them.
func Descriptions(cat *catalog.Catalog) []Description {
	out := []Description{{OID: catalog.PublicOID, ClassOID: pgNamespaceCatalogOID, Text: "standard public schema"}}
	for _, e := range PgClassEntries(cat) {
		if e.Kind == "i" {
			continue
		}
		if e.Rel.Comment != "" {
			out = append(out, Description{OID: e.OID, ClassOID: pgClassOID, Text: e.Rel.Comment})
		}
		for n, i := range e.Rel.VisibleColumns() {
			if c := e.Rel.Columns[i].Comment; c != "" {
				out = append(out, Description{OID: e.OID, ClassOID: pgClassOID, SubID: int64(n + 1), Text: c})
			}
		}
	}
	return out
}
