package nexmark

import (
	"strings"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Column is one column of a nexmark source.
type Column struct {
	Name string
	Type types.T
}

var (
	varcharT = types.T{Kind: types.Text, Varchar: true}

	personColumns = []Column{
		{"id", types.Int64T}, {"name", varcharT}, {"email_address", varcharT}, {"credit_card", varcharT},
		{"city", varcharT}, {"state", varcharT}, {"date_time", types.TimestampT}, {"extra", varcharT},
	}
	auctionColumns = []Column{
		{"id", types.Int64T}, {"item_name", varcharT}, {"description", varcharT}, {"initial_bid", types.Int64T},
		{"reserve", types.Int64T}, {"date_time", types.TimestampT}, {"expires", types.TimestampT},
		{"seller", types.Int64T}, {"category", types.Int64T}, {"extra", varcharT},
	}
	bidColumns = []Column{
		{"auction", types.Int64T}, {"bidder", types.Int64T}, {"price", types.Int64T}, {"channel", varcharT},
		{"url", varcharT}, {"date_time", types.TimestampT}, {"extra", varcharT},
	}
)

// structOf returns the struct type of cols.
func structOf(cols []Column) types.T {
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = types.Field{Name: c.Name, Type: c.Type}
	}
	return types.StructOf(fs)
}

// Columns returns the columns of a source of table t. The combined form
// has event_type (0 person, 1 auction, 2 bid), one struct column per kind
// (NULL for the other kinds) and the event's date_time.
func Columns(t Table) []Column {
	switch t {
	case Person:
		return personColumns
	case Auction:
		return auctionColumns
	case Bid:
		return bidColumns
	}
	return []Column{
		{"event_type", types.Int64T},
		{"person", structOf(personColumns)},
		{"auction", structOf(auctionColumns)},
		{"bid", structOf(bidColumns)},
		{"date_time", types.TimestampT},
	}
}

// CheckColumns reports whether declared, the columns of a CREATE SOURCE,
// are the columns of table t, in order (text and varchar alike; struct
// fields by name and type). The error is 42P16 (invalid_table_definition)
// and lists the expected columns.
func CheckColumns(t Table, declared []Column) error {
	want := Columns(t)
	ok := len(declared) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = declared[i].Name == want[i].Name && sameType(declared[i].Type, want[i].Type)
	}
	if ok {
		return nil
	}
	var b strings.Builder
	for i, c := range want {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " " + c.Type.String())
	}
	return sqlerr.New(sqlerr.InvalidTableDefinition, "a nexmark source of table type %s has the columns (%s)", t, b.String())
}

func sameType(a, b types.T) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case types.Text:
		return a.Width == 0 && b.Width == 0
	case types.Struct:
		fa, fb := a.Fields.List(), b.Fields.List()
		if len(fa) != len(fb) {
			return false
		}
		for i := range fa {
			if fa[i].Name != fb[i].Name || !sameType(fa[i].Type, fb[i].Type) {
				return false
			}
		}
	}
	return true
}
