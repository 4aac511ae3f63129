package ir

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// Expr is a bound scalar expression: every name is resolved, every function is
// resolved to one overload, and every argument already has the type that
// overload expects (the binder inserts the casts). Expressions are immutable
// once bound and may be shared between plans and goroutines.
type Expr interface {
	// Type is the type of the expression's value.
	Type() types.T
	// String renders the expression for EXPLAIN.
	String() string
}

// InputRef is column Index of the input the expression is evaluated over.
type InputRef struct {
	Index int
	T     types.T
	// Name is the column's name, for EXPLAIN only.
	Name string
}

// Const is a constant. A NULL constant has Value.Null set and any type.
type Const struct {
	Value types.Datum
	T     types.T
}

// Call applies function Fn (one of the Fn* names below) to Args. The argument
// types match the overload's ArgTypes exactly.
type Call struct {
	Fn   string
	Args []Expr
	T    types.T
}

// Cast converts Arg to type T with PostgreSQL's cast semantics (rounding for
// numeric to integer, range checks, text parsing).
type Cast struct {
	Arg Expr
	T   types.T
	// Assignment marks the cast that stores a value in a column (INSERT,
	// UPDATE). It differs from an explicit cast only for varchar(n): a value
	// longer than n characters is an error (22001) unless the excess is all
	// spaces, where an explicit cast truncates.
	Assignment bool
}

// Case is CASE WHEN c1 THEN r1 ... ELSE e END (searched form; the binder turns
// the simple form CASE x WHEN v ... into equalities). Else is never nil: a
// missing ELSE is a NULL constant. Every When.Then and Else have type T.
type Case struct {
	Whens []When
	Else  Expr
	T     types.T
}

// When is one arm of a Case.
type When struct {
	Cond Expr // boolean
	Then Expr
}

// InList is Arg [NOT] IN (List...), with PostgreSQL's NULL semantics: the
// result is NULL if Arg is NULL, or if no element matches and some element is
// NULL. All elements have Arg's type.
type InList struct {
	Arg    Expr
	List   []Expr
	Negate bool
}

// Function names used in Call.Fn. Operators get names, not symbols, so that
// overloads resolve the same way for both.
const (
	FnAdd = "add" // numbers; date+int4; timestamp+interval; date+interval; interval+interval
	FnSub = "sub" // numbers; date-int4; date-date; timestamp-interval; timestamp-timestamp; interval-interval
	FnMul = "mul" // numbers; interval*float8
	FnDiv = "div" // numbers (integer division truncates); interval/float8
	FnMod = "mod" // integers and numeric
	FnNeg = "neg" // numbers and interval
	// The bitwise operators over integers: & | #.
	FnBitAnd = "bitand"
	FnBitOr  = "bitor"
	FnBitXor = "bitxor"

	FnEq = "eq"
	FnNe = "ne"
	FnLt = "lt"
	FnLe = "le"
	FnGt = "gt"
	FnGe = "ge"
	// FnIsDistinct and FnIsNotDistinct never return NULL.
	FnIsDistinct    = "is_distinct_from"
	FnIsNotDistinct = "is_not_distinct_from"

	// FnAnd, FnOr take two or more boolean arguments (three-valued logic).
	FnAnd       = "and"
	FnOr        = "or"
	FnNot       = "not"
	FnIsNull    = "is_null"
	FnIsNotNull = "is_not_null"
	FnIsTrue    = "is_true"
	FnIsFalse   = "is_false"

	FnLike     = "like"      // text LIKE pattern, with '\' as the escape
	FnILike    = "ilike"     // case-insensitive LIKE
	FnConcatOp = "concat_op" // text || text; NULL if either is NULL

	// FnCoalesce, FnGreatest and FnLeast take one or more arguments of the result type.
	FnCoalesce = "coalesce"
	FnNullIf   = "nullif"
	FnGreatest = "greatest"
	FnLeast    = "least"

	FnLower      = "lower"
	FnUpper      = "upper"
	FnLength     = "length" // characters, not bytes
	FnOctetLen   = "octet_length"
	FnSubstr     = "substr" // substr(text, int4) and substr(text, int4, int4), 1-based
	FnTrim       = "btrim"  // btrim(text) and btrim(text, chars)
	FnLTrim      = "ltrim"
	FnRTrim      = "rtrim"
	FnReplace    = "replace"
	FnStrpos     = "strpos"
	FnLeft       = "left"
	FnRight      = "right"
	FnRepeat     = "repeat"
	FnReverse    = "reverse"
	FnSplitPart  = "split_part"
	FnConcat     = "concat" // variadic over text; NULL arguments are skipped
	FnStartsWith = "starts_with"
	FnInitcap    = "initcap"
	FnLPad       = "lpad"
	FnRPad       = "rpad"

	FnAbs   = "abs"
	FnRound = "round" // round(x) for numeric/float8; round(numeric, int4)
	FnTrunc = "trunc" // trunc(x) for numeric/float8; trunc(numeric, int4)
	FnFloor = "floor"
	FnCeil  = "ceil"
	FnSign  = "sign"
	FnSqrt  = "sqrt"
	FnPower = "power"
	FnExp   = "exp"
	FnLn    = "ln"
	FnLog10 = "log"

	// FnExtract is extract(field, source): the field is a text constant such as
	// 'year', 'month', 'day', 'hour', 'minute', 'second', 'milliseconds',
	// 'microseconds', 'dow', 'isodow', 'doy', 'week', 'quarter', 'epoch',
	// 'decade', 'century', 'millennium'; the source is a date, timestamp,
	// timestamptz or interval; the result is numeric (as in PostgreSQL 14+).
	FnExtract = "extract"
	// FnDatePart is date_part(field, source), the same as extract but float8.
	FnDatePart = "date_part"
	// FnDateTrunc is date_trunc(field, source) for timestamp, timestamptz and
	// interval sources, with fields microseconds ... millennium.
	FnDateTrunc = "date_trunc"
	// FnNow is the transaction's start time; evaluators read it from the
	// evaluation context so that one statement sees one value.
	FnNow = "now"
	// FnMakeDate is make_date(year, month, day).
	FnToTimestamp = "to_timestamp" // to_timestamp(float8 seconds) -> timestamptz; to_timestamp(text, format)
	// FnDateBin is date_bin(stride, source, origin) for timestamp and
	// timestamptz.
	FnDateBin = "date_bin"
	// FnToChar is to_char(value, format) for timestamps, intervals and numbers.
	FnToChar = "to_char"
	// FnToDate is to_date(text, format).
	FnToDate = "to_date"

	// FnSingleRow(n bigint, v T) is v, or error 21000 when n > 1: the value of a
	// scalar subquery whose n rows were aggregated, so that a subquery
	// returning several rows fails as in PostgreSQL. The binder makes these
	// calls; the name cannot be written unquoted in SQL.
	FnSingleRow = "$single_row"
)

// Overload is one signature of a function.
type Overload struct {
	Fn     string
	Args   []types.T
	Result types.T
	// Variadic means the last entry of Args repeats any number of times (at
	// least once).
	Variadic bool
	// Strict functions return NULL when any argument is NULL; the evaluator
	// handles that before calling the kernel.
	Strict bool
}

// Key identifies the overload, e.g. "add(bigint,bigint)"; evaluators index
// their kernels by it.
func (o *Overload) Key() string {
	return OverloadKey(o.Fn, o.Args)
}

// OverloadKey builds the key of function fn with argument types args (numeric
// arguments are keyed without their typmod).
func OverloadKey(fn string, args []types.T) string {
	var b strings.Builder
	b.WriteString(fn)
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(types.T{Kind: a.Kind}.String())
	}
	b.WriteByte(')')
	return b.String()
}

func (e *InputRef) Type() types.T { return e.T }
func (e *Const) Type() types.T    { return e.T }
func (e *Call) Type() types.T     { return e.T }
func (e *Cast) Type() types.T     { return e.T }
func (e *Case) Type() types.T     { return e.T }
func (e *InList) Type() types.T   { return types.BoolT }

func (e *InputRef) String() string {
	if e.Name != "" {
		return fmt.Sprintf("%s#%d", e.Name, e.Index)
	}
	return fmt.Sprintf("$%d", e.Index)
}

func (e *Const) String() string {
	if e.Value.Null {
		return "NULL"
	}
	s := e.Value.Text(e.T)
	switch e.T.Kind {
	case types.Text, types.Date, types.Timestamp, types.TimestampTZ, types.Interval, types.Bytea, types.UUID, types.JSONB:
		return fmt.Sprintf("'%s'::%s", strings.ReplaceAll(s, "'", "''"), e.T)
	}
	return s
}

var infixNames = map[string]string{
	FnAdd: "+", FnSub: "-", FnMul: "*", FnDiv: "/", FnMod: "%",
	FnBitAnd: "&", FnBitOr: "|", FnBitXor: "#",
	FnEq: "=", FnNe: "<>", FnLt: "<", FnLe: "<=", FnGt: ">", FnGe: ">=",
	FnAnd: "AND", FnOr: "OR", FnLike: "LIKE", FnILike: "ILIKE", FnConcatOp: "||",
	FnIsDistinct: "IS DISTINCT FROM", FnIsNotDistinct: "IS NOT DISTINCT FROM",
}

func (e *Call) String() string {
	if op, ok := infixNames[e.Fn]; ok && len(e.Args) >= 2 {
		parts := make([]string, len(e.Args))
		for i, a := range e.Args {
			parts[i] = a.String()
		}
		return "(" + strings.Join(parts, " "+op+" ") + ")"
	}
	switch e.Fn {
	case FnNot:
		return "(NOT " + e.Args[0].String() + ")"
	case FnNeg:
		return "(-" + e.Args[0].String() + ")"
	case FnIsNull:
		return "(" + e.Args[0].String() + " IS NULL)"
	case FnIsNotNull:
		return "(" + e.Args[0].String() + " IS NOT NULL)"
	case FnIsTrue:
		return "(" + e.Args[0].String() + " IS TRUE)"
	case FnIsFalse:
		return "(" + e.Args[0].String() + " IS FALSE)"
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = a.String()
	}
	return e.Fn + "(" + strings.Join(parts, ", ") + ")"
}

func (e *Cast) String() string { return fmt.Sprintf("CAST(%s AS %s)", e.Arg, e.T) }

func (e *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range e.Whens {
		fmt.Fprintf(&b, " WHEN %s THEN %s", w.Cond, w.Then)
	}
	fmt.Fprintf(&b, " ELSE %s END", e.Else)
	return b.String()
}

func (e *InList) String() string {
	parts := make([]string, len(e.List))
	for i, a := range e.List {
		parts[i] = a.String()
	}
	not := ""
	if e.Negate {
		not = "NOT "
	}
	return fmt.Sprintf("(%s %sIN (%s))", e.Arg, not, strings.Join(parts, ", "))
}

// Walk calls fn for e and every expression under it, parents first. It stops
// descending below a node for which fn returns false.
func Walk(e Expr, fn func(Expr) bool) {
	if !fn(e) {
		return
	}
	switch e := e.(type) {
	case *Call:
		for _, a := range e.Args {
			Walk(a, fn)
		}
	case *Cast:
		Walk(e.Arg, fn)
	case *Case:
		for _, w := range e.Whens {
			Walk(w.Cond, fn)
			Walk(w.Then, fn)
		}
		Walk(e.Else, fn)
	case *InList:
		Walk(e.Arg, fn)
		for _, a := range e.List {
			Walk(a, fn)
		}
	}
}

// Rewrite returns e with every node replaced by fn(node), children first. fn
// returns its argument unchanged to keep a node.
func Rewrite(e Expr, fn func(Expr) Expr) Expr {
	switch n := e.(type) {
	case *Call:
		args := make([]Expr, len(n.Args))
		for i, a := range n.Args {
			args[i] = Rewrite(a, fn)
		}
		e = &Call{Fn: n.Fn, Args: args, T: n.T}
	case *Cast:
		e = &Cast{Arg: Rewrite(n.Arg, fn), T: n.T, Assignment: n.Assignment}
	case *Case:
		whens := make([]When, len(n.Whens))
		for i, w := range n.Whens {
			whens[i] = When{Cond: Rewrite(w.Cond, fn), Then: Rewrite(w.Then, fn)}
		}
		e = &Case{Whens: whens, Else: Rewrite(n.Else, fn), T: n.T}
	case *InList:
		list := make([]Expr, len(n.List))
		for i, a := range n.List {
			list[i] = Rewrite(a, fn)
		}
		e = &InList{Arg: Rewrite(n.Arg, fn), List: list, Negate: n.Negate}
	}
	return fn(e)
}
