package sql

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

func tzCatalog() *catalog.Catalog {
	cat := catalog.New()
	cat.Add(&catalog.Relation{ID: 1, Name: "ev", Kind: catalog.Table, Columns: []catalog.Column{
		{Name: "at", Type: types.TimestampTZT},
		{Name: "ts", Type: types.TimestampT},
		{Name: "d", Type: types.DateT},
		{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true},
	}, Key: []int{3}})
	return cat
}

func bindZone(t *testing.T, zone, text string) ir.Statement {
	t.Helper()
	z, err := types.LoadZone(zone)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	st, err := BindInZone(tzCatalog(), nil, z, ps[0])
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return st
}

// exprs renders the select list of a bound SELECT.
func exprs(st ir.Statement) string {
	p, ok := st.(*ir.Select).Query.(*ir.Project)
	if !ok {
		return ""
	}
	var parts []string
	for _, e := range p.Exprs {
		parts = append(parts, e.String())
	}
	return strings.Join(parts, "; ")
}

// TestZoneBinding checks which operations the binder binds the session's
// zone into, and that a UTC session's plans have none of it.
func TestZoneBinding(t *testing.T) {
	for _, c := range []struct {
		sql string
		// berlin holds in the Europe/Berlin session's select list; none of
		// it appears in a UTC session's.
		berlin []string
		// same are calls that stay as they are in both zones.
		same []string
	}{
		{"SELECT at::timestamp, ts::timestamptz, at::date, d::timestamptz, at::text FROM ev",
			[]string{"$tstz_to_ts(", "$ts_to_tstz(", "$tstz_out("}, nil},
		{"SELECT at + interval '1 day', at - interval '1 month', at + interval '1 hour' FROM ev",
			[]string{"$tstz_add(", "$tstz_sub("}, []string{"+ '01:00:00'"}},
		{"SELECT date_trunc('day', at), extract(hour from at), date_part('dow', at), to_char(at, 'HH24') FROM ev",
			[]string{"$date_trunc(", "$extract(", "$date_part(", "$to_char_tz("}, nil},
		{"SELECT at > ts, localtimestamp, current_date FROM ev", []string{"$ts_to_tstz(", "$tstz_to_ts(now()"}, nil},
		{"SELECT at AT TIME ZONE 'Asia/Kolkata', date_trunc('day', at, 'UTC'), at - at FROM ev", nil,
			[]string{"timezone('Asia/Kolkata'", "date_trunc('day'"}},
	} {
		berlin := exprs(bindZone(t, "Europe/Berlin", c.sql))
		utc := exprs(bindZone(t, "UTC", c.sql))
		for _, want := range c.berlin {
			if !strings.Contains(berlin, want) {
				t.Errorf("%s in Berlin: %s lacks %s", c.sql, berlin, want)
			}
			if strings.Contains(utc, want) {
				t.Errorf("%s in UTC: %s has %s", c.sql, utc, want)
			}
		}
		for _, want := range c.same {
			if !strings.Contains(berlin, want) || !strings.Contains(utc, want) {
				t.Errorf("%s: %s / %s lack %s", c.sql, berlin, utc, want)
			}
		}
		if strings.Contains(utc, "$") {
			t.Errorf("%s in UTC: %s", c.sql, utc)
		}
	}
}

// TestViewZone checks that a materialized view records the zone it is bound
// in, and that binding its stored statement in that zone gives the same plan.
func TestViewZone(t *testing.T) {
	const text = "CREATE MATERIALIZED VIEW v AS SELECT at::date AS day FROM ev"
	cmv := bindZone(t, "europe/berlin", text).(*ir.CreateMaterializedView)
	if cmv.TimeZone != "Europe/Berlin" {
		t.Fatalf("TimeZone %q", cmv.TimeZone)
	}
	if utc := bindZone(t, "UTC", text).(*ir.CreateMaterializedView); utc.TimeZone != "" {
		t.Fatalf("UTC view TimeZone %q", utc.TimeZone)
	}
	ps, _ := Parse(text)
	again, err := BindStoredZone(tzCatalog(), nil, cmv.TimeZone, ps[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := again.(*ir.CreateMaterializedView).Query.(*ir.Project).Exprs[0].String(),
		cmv.Query.(*ir.Project).Exprs[0].String(); got != want {
		t.Errorf("stored view binds to %s, created as %s", got, want)
	}
}
