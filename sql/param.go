package sql

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Query parameters ($1, $2, ...) are bound in two steps, for the extended
// query protocol:
//
//   - Prepare binds a statement once to learn the parameters' types: a
//     parameter the client did not declare is an untyped value, like a string
//     literal, until its context gives it a type (k = $1 takes k's type, an
//     INSERT value the column's). The statement bound by Prepare describes
//     the result but is not executed.
//   - BindParams binds the statement again for each execution, with every
//     parameter replaced by a constant of its type holding the client's value.
//     The executed statement therefore has no parameters left: the planner and
//     the evaluator see only constants.
//
// Statements bound by Bind (the simple query protocol) have no parameters: $n
// is error 42P02, as in PostgreSQL.

// maxParams is the largest parameter number, as in PostgreSQL (the Bind
// message counts parameters in 16 bits).
const maxParams = 65535

// SQLSTATEs of parameter errors.
const (
	undefinedParameter = "42P02" // undefined_parameter
	indeterminateType  = "42P18" // indeterminate_datatype
	ambiguousParameter = "42P08" // ambiguous_parameter
)

// Param is parameter $(Index+1) of a statement being prepared. It exists only
// in the statements Prepare returns; BindParams binds parameters as Consts.
// T is Unknown until the parameter's context decides its type.
type Param struct {
	Index int
	T     types.T
}

func (e *Param) Type() types.T  { return e.T }
func (e *Param) String() string { return fmt.Sprintf("$%d", e.Index+1) }

// paramState is the binder's view of the parameters of the statement it
// binds.
type paramState struct {
	// types holds the type of each parameter: declared, inferred so far
	// (Prepare), or final (BindParams). Prepare extends it as higher
	// parameters are referenced.
	types []types.T
	// exec is set when binding for execution (BindParams): values holds
	// the parameters' values.
	exec   bool
	values []types.Datum
	// referenced is set for each parameter the statement mentions.
	referenced []bool
}

// Prepare binds p, a statement of the extended query protocol, to learn its
// parameter types and its result. declared holds the types the client gave
// for $1, $2, ... (UnknownT leaves one to be inferred); the statement may
// reference more parameters than declared.
//
// paramTypes has an entry for every parameter up to the highest referenced or
// declared one. Where nothing else decides, a parameter is text, as an untyped
// literal would be (SELECT $1; SELECT $1 IS NULL, where PostgreSQL says
// 42P18). An entry may still be UnknownT if a context accepted an untyped
// value as it is; its value is then text, bound as an untyped literal. A
// parameter that is neither declared nor referenced (a gap, as $1 in SELECT
// $2::int) is error 42P18, as in PostgreSQL.
//
// The statement must not be executed: it is for its result columns only
// (Params stand where the values will be).
func Prepare(cat *catalog.Catalog, p *Parsed, declared []types.T) (st ir.Statement, paramTypes []types.T, err error) {
	return PrepareIn(cat, nil, p, declared)
}

// PrepareIn is Prepare with unqualified names resolved in searchPath (see
// BindIn).
func PrepareIn(cat *catalog.Catalog, searchPath []string, p *Parsed, declared []types.T) (st ir.Statement, paramTypes []types.T, err error) {
	return PrepareInZone(cat, searchPath, nil, p, declared)
}

// PrepareInZone is PrepareIn for a session whose TimeZone is zone (nil: UTC).
func PrepareInZone(cat *catalog.Catalog, searchPath []string, zone *types.Zone, p *Parsed, declared []types.T) (st ir.Statement, paramTypes []types.T, err error) {
	ps := &paramState{types: append([]types.T(nil), declared...)}
	ps.referenced = make([]bool, len(ps.types))
	if p.custom != nil {
		st, err = BindInZone(cat, searchPath, zone, p)
	} else {
		b := &binder{cat: cat, path: searchPath, full: p.full, base: p.base, text: p.Text, textStart: textStart(p), params: ps, zone: zone, session: p.session}
		st, err = b.bindStatement(p.node)
	}
	if err != nil {
		return nil, nil, err
	}
	for i, t := range ps.types {
		if t.Kind == types.Unknown && !ps.referenced[i] {
			return nil, nil, sqlerr.New(indeterminateType, "could not determine data type of parameter $%d", i+1)
		}
	}
	return st, ps.types, nil
}

// BindParams binds p for execution with parameter values: paramTypes are the
// types Prepare returned, values holds one value of that type per parameter
// (types.Null for NULL; text for an UnknownT parameter). Every reference to a
// parameter becomes a Const.
func BindParams(cat *catalog.Catalog, p *Parsed, paramTypes []types.T, values []types.Datum) (ir.Statement, error) {
	return BindParamsIn(cat, nil, p, paramTypes, values)
}

// BindParamsIn is BindParams with unqualified names resolved in searchPath
// (see BindIn).
func BindParamsIn(cat *catalog.Catalog, searchPath []string, p *Parsed, paramTypes []types.T, values []types.Datum) (ir.Statement, error) {
	return BindParamsInZone(cat, searchPath, nil, p, paramTypes, values)
}

// BindParamsInZone is BindParamsIn for a session whose TimeZone is zone
// (nil: UTC).
func BindParamsInZone(cat *catalog.Catalog, searchPath []string, zone *types.Zone, p *Parsed, paramTypes []types.T, values []types.Datum) (ir.Statement, error) {
	st, _, err := BindParamsInZoneRefs(cat, searchPath, zone, p, paramTypes, values)
	return st, err
}

// BindParamsInZoneRefs is BindParamsInZone that also returns what the
// statement touches, as BindInZoneRefs does.
func BindParamsInZoneRefs(cat *catalog.Catalog, searchPath []string, zone *types.Zone, p *Parsed, paramTypes []types.T, values []types.Datum) (ir.Statement, Access, error) {
	if len(values) != len(paramTypes) {
		return nil, Access{}, sqlerr.New(sqlerr.InternalError, "sql: %d parameter values for %d parameters", len(values), len(paramTypes))
	}
	if p.custom != nil {
		return BindInZoneRefs(cat, searchPath, zone, p)
	}
	ps := &paramState{types: paramTypes, exec: true, values: values, referenced: make([]bool, len(paramTypes))}
	b := &binder{cat: cat, path: searchPath, full: p.full, base: p.base, text: p.Text, textStart: textStart(p), params: ps, zone: zone, session: p.session}
	st, err := b.bindStatement(p.node)
	if err == nil {
		b.stampZone(st)
	}
	return st, b.access(), err
}

// bindParamRef binds a reference to a parameter.
func (b *binder) bindParamRef(ref *pg_query.ParamRef) (ir.Expr, error) {
	n := int(ref.Number)
	ps := b.params
	if ps == nil || n < 1 || n > maxParams || ps.exec && n > len(ps.types) {
		return nil, b.errAt(ref.Location, sqlerr.New(undefinedParameter, "there is no parameter $%d", n))
	}
	i := n - 1
	for len(ps.types) < n {
		ps.types = append(ps.types, types.UnknownT)
		ps.referenced = append(ps.referenced, false)
	}
	ps.referenced[i] = true
	t := ps.types[i]
	if !ps.exec {
		return &Param{Index: i, T: t}, nil
	}
	c := &ir.Const{Value: ps.values[i], T: t}
	if t.Kind == types.Unknown {
		// An untyped parameter is a string literal: errors converting it
		// point at the parameter.
		if b.litLoc == nil {
			b.litLoc = map[*ir.Const]int32{}
		}
		b.litLoc[c] = ref.Location
	}
	return c, nil
}

// resolveParam gives the untyped parameter p the type its context needs, t
// without modifiers (a parameter stored into a varchar(3) column is
// character varying; the assignment cast applies the limit), and returns the parameter as an
// expression of that type. A second, different type for the same parameter
// is error 42P08, as in PostgreSQL.
func (b *binder) resolveParam(p *Param, t types.T, loc int32) (ir.Expr, error) {
	base := types.WithoutTypmod(t)
	ps := b.params
	switch cur := ps.types[p.Index]; {
	case cur.Kind == types.Unknown:
		ps.types[p.Index] = base
	case cur != base:
		e := sqlerr.New(ambiguousParameter, "inconsistent types deduced for parameter $%d", p.Index+1)
		e.Detail = fmt.Sprintf("%s versus %s", cur, base)
		return nil, b.errAt(loc, e)
	}
	return &Param{Index: p.Index, T: base}, nil
}

// defaultParamType gives the untyped parameter p the type text, as
// PostgreSQL does where nothing else decides (the select list), unless
// another reference has typed it meanwhile.
func (b *binder) defaultParamType(p *Param) ir.Expr {
	ps := b.params
	if ps.types[p.Index].Kind == types.Unknown {
		ps.types[p.Index] = types.TextT
	}
	return &Param{Index: p.Index, T: ps.types[p.Index]}
}

// untypedParam returns e as an untyped parameter, if it is one.
func untypedParam(e ir.Expr) (*Param, bool) {
	p, ok := e.(*Param)
	return p, ok && p.T.Kind == types.Unknown
}

// hasParams reports whether the statement being bound has referenced a
// parameter.
func (b *binder) hasParams() bool {
	if b.params == nil {
		return false
	}
	for _, r := range b.params.referenced {
		if r {
			return true
		}
	}
	return false
}
