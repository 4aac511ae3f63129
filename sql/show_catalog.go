package sql

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
)

// ShowCreate is SHOW CREATE TABLE|MATERIALIZED VIEW|VIEW|SOURCE|SINK name:
// the statement that creates the relation (RisingWave's syntax).
type ShowCreate struct {
	Kind catalog.Kind
	Name ir.ObjectName
}

func (*ShowCreate) Tag() string { return "SHOW" }

// ShowColumns is SHOW COLUMNS FROM|IN name: the relation's visible
// columns with their types.
type ShowColumns struct {
	Name ir.ObjectName
}

func (*ShowColumns) Tag() string { return "SHOW" }

// parseShowCatalog recognises SHOW CREATE ... and SHOW COLUMNS from the
// lower-cased tokens of a custom statement; nil for others.
func parseShowCatalog(words []string) ir.Statement {
	if len(words) < 3 || words[0] != "show" {
		return nil
	}
	if words[1] == "columns" && (words[2] == "from" || words[2] == "in") {
		if name, rest := customName(words[3:]); name.Name != "" && len(rest) == 0 {
			return &ShowColumns{Name: name}
		}
		return nil
	}
	if words[1] != "create" {
		return nil
	}
	kinds := []struct {
		words []string
		kind  catalog.Kind
	}{
		{[]string{"table"}, catalog.Table}, {[]string{"materialized", "view"}, catalog.MaterializedView},
		{[]string{"view"}, catalog.View}, {[]string{"source"}, catalog.Source}, {[]string{"sink"}, catalog.Sink},
	}
	for _, k := range kinds {
		n := len(k.words)
		if len(words) > 2+n && strings.Join(words[2:2+n], " ") == strings.Join(k.words, " ") {
			if name, rest := customName(words[2+n:]); name.Name != "" && len(rest) == 0 {
				return &ShowCreate{Kind: k.kind, Name: name}
			}
		}
	}
	return nil
}

// CreateStatement is what SHOW CREATE shows of r: the defining statement of
// a view, source or sink as it was written; for a table, a CREATE TABLE
// statement made from its columns, defaults and primary key.
func CreateStatement(r *catalog.Relation) string {
	if r.Kind != catalog.Table || r.SQL != "" {
		return r.SQL
	}
	var parts []string
	for _, i := range r.VisibleColumns() {
		c := r.Columns[i]
		def := QuoteIdent(c.Name) + " " + FormatType(ColumnTypeOID(c.Type), int64(c.Type.Typmod()), true)
		if FormatType(ColumnTypeOID(c.Type), -1, false) == "???" {
			def = QuoteIdent(c.Name) + " " + c.Type.String()
		}
		if c.NotNull {
			def += " NOT NULL"
		}
		if c.Default != "" {
			def += " DEFAULT " + c.Default
		}
		parts = append(parts, def)
	}
	if r.PrimaryKey {
		parts = append(parts, PrimaryKeyDef(r))
	}
	return fmt.Sprintf("CREATE TABLE %s.%s (%s)", QuoteIdent(r.Schema), QuoteIdent(r.Name), strings.Join(parts, ", "))
}
