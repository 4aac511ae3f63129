package catalog

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

func TestResolveFunctionsShadowsBySignature(t *testing.T) {
	c := New()
	c.AddSchema(&Schema{ID: 1, Name: "s"})
	pubInt := &Function{ID: 10, Schema: Public, Name: "f", ArgTypes: []types.T{types.Int32T}}
	pubText := &Function{ID: 11, Schema: Public, Name: "f", ArgTypes: []types.T{types.TextT}}
	sInt := &Function{ID: 12, Schema: "s", Name: "f", ArgTypes: []types.T{types.Int32T}}
	for _, f := range []*Function{pubInt, pubText, sInt} {
		c.AddFunction(f)
	}
	got := c.ResolveFunctions([]string{"s", Public}, "f")
	if len(got) != 2 || got[0] != sInt || got[1] != pubText {
		t.Fatalf("path s, public: got %v", got)
	}
	got = c.ResolveFunctions(nil, "f")
	if len(got) != 2 || got[0] != pubInt || got[1] != pubText {
		t.Fatalf("path public: got %v", got)
	}
	if got := c.ResolveFunctions([]string{"s"}, "g"); len(got) != 0 {
		t.Fatalf("unknown name: got %v", got)
	}
	c.RemoveFunction(12)
	if c.FunctionByID(12) != nil || len(c.FunctionsIn("s", "f")) != 0 {
		t.Fatal("function not removed")
	}
	b, err := pubText.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeFunction(b)
	if err != nil || d.Signature() != "f(text)" || !d.SameArgs([]types.T{types.TextT}) {
		t.Fatalf("round trip: %v %v", d, err)
	}
}

func TestFunctionDependents(t *testing.T) {
	c := New()
	v := &Relation{ID: 5, Name: "v", Kind: View, CallsFunctions: []uint32{10}, ReadsThrough: []uint32{3}}
	c.Add(v)
	if deps := c.FunctionDependents(10); len(deps) != 1 || deps[0] != v {
		t.Fatalf("dependents of 10: %v", deps)
	}
	if deps := c.Dependents(3); len(deps) != 1 || deps[0] != v {
		t.Fatalf("a relation read through a function: %v", deps)
	}
}
