package catalog

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// An entry written before schemas existed has no schema: it is in public,
// found by its bare name and by public.name.
func TestDecodeLegacyEntryIsPublic(t *testing.T) {
	r, err := Decode([]byte(`{"id":7,"name":"t","kind":1,"columns":[{"name":"a","type":{"kind":3}}],"key":[0],"state_table":8}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != Public {
		t.Fatalf("schema = %q, want public", r.Schema)
	}
	c := New()
	c.Add(r)
	if c.Lookup("t") != r || c.Lookup("public.t") != r || c.LookupIn(Public, "t") != r {
		t.Fatal("legacy relation not found in public")
	}
}

func TestResolveAndCreationSchema(t *testing.T) {
	c := New()
	c.AddSchema(&Schema{ID: 1, Name: "s1"})
	pub := &Relation{ID: 10, Name: "t", Kind: Table, Columns: []Column{{Name: "a", Type: types.Int32T}}}
	s1 := &Relation{ID: 11, Schema: "s1", Name: "t", Kind: Table}
	sys := &Relation{ID: 12, Schema: PgCatalog, Name: "t", Kind: SystemTable}
	c.Add(pub)
	c.Add(s1)
	for _, tc := range []struct {
		path []string
		want *Relation
	}{
		{nil, pub},
		{[]string{"s1", Public}, s1},
		{[]string{"nosuch", Public, "s1"}, pub},
		{[]string{}, nil},
	} {
		if got := c.Resolve(tc.path, "t"); got != tc.want {
			t.Errorf("Resolve(%q, t) = %v, want %v", tc.path, got, tc.want)
		}
	}
	// pg_catalog comes first unless the path places it.
	c.Add(sys)
	if got := c.Resolve([]string{"s1"}, "t"); got != sys {
		t.Errorf("pg_catalog not searched first: %v", got)
	}
	if got := c.Resolve([]string{"s1", PgCatalog}, "t"); got != s1 {
		t.Errorf("explicit pg_catalog position ignored: %v", got)
	}
	if !c.Visible([]string{"s1", PgCatalog}, s1) || c.Visible([]string{"s1", PgCatalog}, pub) {
		t.Error("Visible disagrees with Resolve")
	}
	if got := c.CreationSchema([]string{"nosuch", "s1", Public}); got != "s1" {
		t.Errorf("CreationSchema = %q, want s1", got)
	}
	if got := c.CreationSchema([]string{"nosuch"}); got != "" {
		t.Errorf("CreationSchema = %q, want none", got)
	}
	if got := c.InSchema("s1"); len(got) != 1 || got[0] != s1 {
		t.Errorf("InSchema(s1) = %v", got)
	}
	c.Remove(s1.ID)
	if c.LookupIn("s1", "t") != nil {
		t.Error("removed relation still found")
	}
}

// Dependents follow the relations a definition names (Refs); views stored
// without Refs depend on their dataflow inputs (DependsOn).
func TestDependentsUseRefs(t *testing.T) {
	c := New()
	tbl := &Relation{ID: 1, Name: "t", Kind: Table}
	v := &Relation{ID: 2, Name: "v", Kind: View, Refs: []Ref{{Loc: 20, ID: 1}, {Loc: 40, ID: 1}}}
	mv := &Relation{ID: 3, Name: "mv", Kind: MaterializedView, DependsOn: []uint32{1}, Refs: []Ref{{Loc: 30, ID: 2}}}
	old := &Relation{ID: 4, Name: "old", Kind: MaterializedView, DependsOn: []uint32{1}}
	for _, r := range []*Relation{tbl, v, mv, old} {
		c.Add(r)
	}
	names := func(rs []*Relation) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	if got := names(c.Dependents(1)); len(got) != 2 || got[0] != "v" || got[1] != "old" {
		t.Errorf("Dependents(t) = %v, want [v old]", got)
	}
	if got := names(c.Dependents(2)); len(got) != 1 || got[0] != "mv" {
		t.Errorf("Dependents(v) = %v, want [mv]", got)
	}
	if got := v.Uses(); len(got) != 1 || got[0] != 1 {
		t.Errorf("Uses = %v, want [1]", got)
	}
}
