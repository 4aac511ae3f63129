package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Catalog keys of SQL functions: funcPrefix + big-endian function id ->
// JSON function (catalog.Function). Function ids come from the relation id
// counter.
var funcPrefix = []byte("f")

func funcKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), funcPrefix...), id)
}

func (c *catalogSource) putFunction(f *catalog.Function) error {
	v, err := f.Encode()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Put(funcKey(f.ID), v)
	return nil
}

func (c *catalogSource) deleteFunction(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Delete(funcKey(id))
}

// loadFunctions reads the committed SQL functions.
func (e *Engine) loadFunctions(snap *state.Snapshot) error {
	it, err := snap.NewIter(catalogTable, funcPrefix, state.PrefixEnd(funcPrefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		f, err := catalog.DecodeFunction(it.Value())
		if err != nil {
			return err
		}
		e.cat.AddFunction(f)
	}
	return it.Error()
}

// createFunction is CREATE [OR REPLACE] FUNCTION. Replacing keeps the
// function's id, so the plain views that call it see the new body; it is
// refused under a materialized view, whose dataflow inlined the old one.
func (e *Engine) createFunction(cat *catalog.Catalog, st *sql.CreateFunction) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	fn := st.Fn
	fn.Database = cat.DatabaseName()
	if err := e.checkSchema(cat, fn.Schema); err != nil {
		return err
	}
	var old *catalog.Function
	for _, f := range cat.FunctionsIn(fn.Schema, fn.Name) {
		if f.SameArgs(fn.ArgTypes) {
			old = f
		}
	}
	switch {
	case old == nil:
		fn.ID = e.catSrc.allocIDs(1)[0]
	case !st.Replace:
		return sqlerr.New(duplicateFunction, "function \"%s\" already exists with same argument types", fn.Name)
	default:
		if err := e.checkReplaceFunction(cat, old, fn); err != nil {
			return err
		}
		fn.ID = old.ID
	}
	if err := e.commitCatalogChange(func() error { return e.catSrc.putFunction(fn) }); err != nil {
		return err
	}
	cat.AddFunction(fn)
	return nil
}

// duplicateFunction is SQLSTATE 42723, invalidFunctionDefinition 42P13.
const (
	duplicateFunction         = "42723"
	invalidFunctionDefinition = "42P13"
)

// checkReplaceFunction checks that fn may replace old: as in PostgreSQL
// the return type and the parameters' names stay, and no materialized view
// calls old, directly or through plain views.
func (e *Engine) checkReplaceFunction(cat *catalog.Catalog, old, fn *catalog.Function) error {
	if !types.Identical(old.Result, fn.Result) {
		return sqlerr.New(invalidFunctionDefinition, "cannot change return type of existing function").
			WithHint("Use DROP FUNCTION %s first.", old.Signature())
	}
	for i, n := range old.ArgNames {
		if n != "" && n != fn.ArgNames[i] {
			return sqlerr.New(invalidFunctionDefinition, "cannot change name of input parameter \"%s\"", n).
				WithHint("Use DROP FUNCTION %s first.", old.Signature())
		}
	}
	seen := map[uint32]bool{}
	var visit func(deps []*catalog.Relation) error
	visit = func(deps []*catalog.Relation) error {
		for _, d := range deps {
			if seen[d.ID] {
				continue
			}
			seen[d.ID] = true
			if d.Kind == catalog.MaterializedView {
				return sqlerr.Unsupported("replacing function %s, which materialized view %s calls", old.Signature(), d.Name)
			}
			if err := visit(cat.Dependents(d.ID)); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(cat.FunctionDependents(old.ID))
}

// resolveFunction finds the function a DROP FUNCTION target names, or nil.
func (e *Engine) resolveFunction(cat *catalog.Catalog, path []string, t sql.FunctionTarget) (*catalog.Function, error) {
	var cands []*catalog.Function
	if t.Name.Schema != "" {
		if cat.Schema(t.Name.Schema) == nil {
			return nil, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", t.Name.Schema)
		}
		cands = cat.FunctionsIn(t.Name.Schema, t.Name.Name)
	} else {
		cands = cat.ResolveFunctions(path, t.Name.Name)
	}
	if t.AnyArgs {
		if len(cands) > 1 {
			return nil, sqlerr.New(sqlerr.AmbiguousFunction, "function name \"%s\" is not unique", t.Name).
				WithHint("Specify the argument list to select the function unambiguously.")
		}
		if len(cands) == 1 {
			return cands[0], nil
		}
		return nil, nil
	}
	for _, f := range cands {
		if f.SameArgs(t.Args) {
			return f, nil
		}
	}
	return nil, nil
}

// dropFunction is DROP FUNCTION: refused (2BP01) while views call the
// function, unless CASCADE, which drops them and what depends on them.
func (e *Engine) dropFunction(ctx context.Context, cat *catalog.Catalog, st *sql.DropFunction, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	var fns []*catalog.Function
	for _, t := range st.Targets {
		fn, err := e.resolveFunction(cat, st.Path, t)
		if err != nil {
			return err
		}
		if fn == nil {
			msg := fmt.Sprintf("function %s does not exist", t)
			if t.AnyArgs {
				msg = fmt.Sprintf("could not find a function named \"%s\"", t.Name)
			}
			if st.IfExists {
				if t.AnyArgs {
					msg = fmt.Sprintf("function %s() does not exist", t.Name)
				}
				if err := w.Notice("NOTICE", sqlerr.UndefinedFunction, msg+", skipping"); err != nil {
					return err
				}
				continue
			}
			return sqlerr.New(sqlerr.UndefinedFunction, "%s", msg)
		}
		if !slices.ContainsFunc(fns, func(f *catalog.Function) bool { return f.ID == fn.ID }) {
			fns = append(fns, fn)
		}
	}
	var deps []*catalog.Relation
	var lines []string
	for _, fn := range fns {
		for _, d := range cat.FunctionDependents(fn.ID) {
			if !contains(deps, d) {
				deps = append(deps, d)
				lines = append(lines, fmt.Sprintf("%s depends on function %s", e.describe(cat, st.Path, d), fn.Signature()))
			}
		}
	}
	order, more := e.dropOrder(cat, deps, deps, st.Path)
	lines = append(lines, more...)
	if len(deps) > 0 && !st.Cascade {
		msg := "cannot drop desired object(s) because other objects depend on them"
		if len(fns) == 1 {
			msg = fmt.Sprintf("cannot drop function %s because other objects depend on it", fns[0].Signature())
		}
		return sqlerr.New(sqlerr.DependentObjectsStillExist, "%s", msg).
			WithDetail(strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	if err := e.dropRelations(ctx, cat, order, nil, st.Path, w); err != nil {
		return err
	}
	for _, fn := range fns {
		if err := e.commitCatalogChange(func() error { e.catSrc.deleteFunction(fn.ID); return nil }); err != nil {
			return err
		}
		cat.RemoveFunction(fn.ID)
	}
	return nil
}

// dropSchemaFunctions drops the functions of schema (DROP SCHEMA ...
// CASCADE, once the relations that could call them are gone).
func (e *Engine) dropSchemaFunctions(cat *catalog.Catalog, schema string, w notifier) error {
	for _, fn := range cat.Functions() {
		if fn.Schema != schema {
			continue
		}
		if err := w.Notice("NOTICE", "00000", "drop cascades to function "+fn.Schema+"."+fn.Signature()); err != nil {
			return err
		}
		if err := e.commitCatalogChange(func() error { e.catSrc.deleteFunction(fn.ID); return nil }); err != nil {
			return err
		}
		cat.RemoveFunction(fn.ID)
	}
	return nil
}
