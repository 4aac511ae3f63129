package difftest

// Column types beyond the scalars of gen.go.
//
// gen.go knows the scalar types (numbers, text, boolean, dates, intervals)
// by name in its switches. Every other column type is described by an
// extType registered in extTypes, which gen.go consults where a switch over
// the scalars ends: declaring the type, generating its values and literals,
// bounding a column, building expressions of the type and expressions of a
// scalar type over it. Adding a type is a typ constant in gen.go (with its
// name in typeNames), a file of its own that registers its extType in an
// init function, and its entry in columnTypes and, if it is ordered, in
// comparableTypes. Arrays (gen_array.go), jsonb (gen_jsonb.go) and structs
// (gen_struct.go) are done so. A type PostgreSQL spells differently is
// written as streamsql spells it and rewritten for PostgreSQL by pgSpell
// (gen_struct.go), which the harness applies to every statement and query
// it sends PostgreSQL.

// extType describes a non-scalar column type. Every function gets a gen
// positioned in its seeded stream, so that generation stays deterministic.
type extType struct {
	// column sets the bounds of a table column's expr of this type.
	column func(e *expr)
	// value returns a non-NULL literal for a column of this type, as
	// INSERT ... VALUES takes it.
	value func(g *gen) string
	// series returns a value computed from the series number i, for
	// INSERT ... SELECT FROM generate_series(1, n) AS g(i).
	series func(g *gen) string
	// literal returns a non-NULL typed literal expression.
	literal func(g *gen) expr
	// make returns an expression of this type with an operator at the top,
	// its operands of at most depth levels; c says what the result may be,
	// x is the context of operands (see compound). ok is false when the
	// production picked does not apply.
	make func(g *gen, c, x *ectx, depth int) (e expr, ok bool)
	// use returns an expression of scalar type t over values of this type
	// (a subscript, a length, a containment test), or ok false if there is
	// none for t.
	use func(g *gen, x *ectx, t typ, depth int) (e expr, ok bool)
	// limit bounds expr.bound of values of this type (see typ.limit), and
	// maxLen bounds expr.length.
	limit, maxLen float64
	// greatest says whether GREATEST and LEAST take values of this type.
	greatest bool
}

// extTypes are the registered non-scalar types.
var extTypes = map[typ]*extType{}

// extOrder lists extTypes' keys in the order of registration, for
// deterministic iteration.
var extOrder []typ

func registerType(t typ, s *extType) {
	extTypes[t] = s
	extOrder = append(extOrder, t)
}

// extUseChance is the chance that an expression of a scalar type is
// computed from a value of a non-scalar type in scope.
const extUseChance = 0.3

// fromExt returns, now and then, an expression of scalar type t over a
// column in scope of a non-scalar type (or an expression built from one).
func (g *gen) fromExt(x *ectx, t typ, depth int) (expr, bool) {
	if _, ext := extTypes[t]; ext {
		return expr{}, false
	}
	var have []typ
	for _, et := range extOrder {
		if len(x.columnsOf(et)) > 0 {
			have = append(have, et)
		}
	}
	if len(have) == 0 || !g.chance(extUseChance) {
		return expr{}, false
	}
	return extTypes[pick(g, have)].use(g, x, t, depth)
}

// hasColumnOf reports whether r has a column whose type is one of ts.
func hasColumnOf(r *relation, ts ...typ) bool {
	for _, c := range r.cols {
		for _, t := range ts {
			if c.t == t {
				return true
			}
		}
	}
	return false
}
