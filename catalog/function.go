package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Function is a SQL function (CREATE FUNCTION ... LANGUAGE SQL): a scalar
// expression or query over its arguments, inlined into the statements that
// call it. Functions share the id space of relations and are persisted
// alongside them (see Encode).
type Function struct {
	ID uint32 `json:"id"`
	// Database is the database the function is in (DefaultDatabase for
	// entries stored before databases existed).
	Database string `json:"database,omitempty"`
	Schema   string `json:"schema"`
	Name     string `json:"name"`
	// ArgNames are the parameters' names ("" for an unnamed one), ArgTypes
	// their types.
	ArgNames []string  `json:"arg_names,omitempty"`
	ArgTypes []types.T `json:"arg_types,omitempty"`
	Result   types.T   `json:"result"`
	// Strict functions return NULL, without evaluating their body, when an
	// argument is NULL (STRICT, RETURNS NULL ON NULL INPUT).
	Strict bool `json:"strict,omitempty"`
	// Volatility is "immutable", "stable" or "volatile" as declared.
	Volatility string `json:"volatility"`
	// SQL is the CREATE FUNCTION statement's text.
	SQL string `json:"sql"`
	// Body is the text of an AS '...' body; empty for a SQL-standard body
	// (RETURN expr, BEGIN ATOMIC ... END), which is the one in SQL.
	Body string `json:"body,omitempty"`
	// Refs are the relations and Calls the functions the body names, with
	// the byte offset of each name in the body's text (Body, or SQL for a
	// SQL-standard body): binding the body again resolves each name to the
	// same object, as Relation.Refs do for views.
	Refs  []Ref `json:"refs,omitempty"`
	Calls []Ref `json:"calls,omitempty"`
}

// Signature renders the function as PostgreSQL names it in messages:
// "f(integer, text)".
func (f *Function) Signature() string {
	ts := make([]string, len(f.ArgTypes))
	for i, t := range f.ArgTypes {
		ts[i] = types.WithoutTypmod(t).String()
	}
	return f.Name + "(" + strings.Join(ts, ", ") + ")"
}

// SameArgs reports whether f takes arguments of the types ts (without type
// modifiers, which do not distinguish functions).
func (f *Function) SameArgs(ts []types.T) bool {
	if len(ts) != len(f.ArgTypes) {
		return false
	}
	for i, t := range ts {
		if types.WithoutTypmod(t) != types.WithoutTypmod(f.ArgTypes[i]) {
			return false
		}
	}
	return true
}

// Encode returns the persistent form of f.
func (f *Function) Encode() ([]byte, error) { return json.Marshal(f) }

// DecodeFunction parses the persistent form of a function.
func DecodeFunction(b []byte) (*Function, error) {
	f := &Function{}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("catalog: corrupt function entry: %w", err)
	}
	if f.Database == "" {
		f.Database = DefaultDatabase
	}
	return f, nil
}

// AddFunction adds or replaces f (by id); a function without a database
// goes to the handle's.
func (c *Catalog) AddFunction(f *Function) {
	if f.Database == "" {
		f.Database = c.db
	}
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	c.idx.funcs[f.ID] = f
}

// RemoveFunction removes the function with id.
func (c *Catalog) RemoveFunction(id uint32) {
	c.idx.mu.Lock()
	defer c.idx.mu.Unlock()
	delete(c.idx.funcs, id)
}

// FunctionByID returns the function with id, or nil.
func (c *Catalog) FunctionByID(id uint32) *Function {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	return c.idx.funcs[id]
}

// FunctionsIn returns the functions called name in schema, ordered by id.
func (c *Catalog) FunctionsIn(schema, name string) []*Function {
	var out []*Function
	for _, f := range c.Functions() {
		if f.Schema == schema && f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// ResolveFunctions returns the functions an unqualified name can call under
// a search path: those called name in the schemas of the path, a function
// hiding those of later schemas with the same argument types, as in
// PostgreSQL. pg_catalog holds no user functions.
func (c *Catalog) ResolveFunctions(path []string, name string) []*Function {
	var out []*Function
	for _, schema := range effectivePath(path) {
		for _, f := range c.FunctionsIn(schema, name) {
			if !slices.ContainsFunc(out, func(g *Function) bool { return g.SameArgs(f.ArgTypes) }) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Functions returns the functions of the handle's database ordered by id.
func (c *Catalog) Functions() []*Function {
	c.idx.mu.RLock()
	defer c.idx.mu.RUnlock()
	var out []*Function
	for _, f := range c.idx.funcs {
		if f.Database == c.db {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// FunctionDependents returns the views that call function id, directly or
// through the functions they call.
func (c *Catalog) FunctionDependents(id uint32) []*Relation {
	var deps []*Relation
	for _, r := range c.All() {
		if slices.Contains(r.CallsFunctions, id) {
			deps = append(deps, r)
		}
	}
	return deps
}
