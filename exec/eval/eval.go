// Package eval compiles bound scalar expressions (ir.Expr) into evaluators
// over Arrow record batches, with PostgreSQL's semantics.
//
// # Evaluation model
//
// An expression compiles to a tree of nodes. Each node evaluates a whole
// batch at once into a new Arrow column: the hot operators (arithmetic,
// comparisons, boolean logic, IS NULL, IN lists of constants, CASE, COALESCE,
// casts between numbers, LIKE with a constant pattern) run typed loops over
// the Arrow buffers with constant operands specialised; every other function
// runs its scalar kernel row by row (the same kernels EvalDatum uses, so the
// two paths agree by construction).
//
// # Row errors and laziness
//
// A failing row (division by zero, overflow, bad cast input) is a row error.
// In strict mode the first one fails the evaluation; otherwise the whole
// row's result becomes NULL (not just the failing subexpression, whose NULL
// could otherwise be absorbed by IS NULL, COALESCE or AND) and is counted
// once, as EvalDatum does for a single value. Because a batch evaluates every operand of CASE, AND,
// OR and COALESCE for all rows at once, each evaluation carries an activity
// mask: the rows whose value can still matter. CASE evaluates a branch with
// only the rows that take it active, AND/OR deactivate rows already decided,
// COALESCE rows already non-NULL. A row error in an inactive row is ignored,
// so `CASE WHEN b <> 0 THEN a / b END` and `b <> 0 AND a / b > 1` never fail,
// as in PostgreSQL.
package eval

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Context is what evaluation needs besides the input. One Context is used by one
// goroutine at a time.
type Context struct {
	Mem memory.Allocator
	// Strict is true for batch queries: the first failing row (division by zero,
	// overflow, bad cast input) fails the whole evaluation with its *sqlerr.Error.
	// When false (streaming views), a failing row yields NULL, Errors is incremented,
	// and the first error of each kind is logged through Log (at most one log line per
	// expression per second: don't flood).
	Strict bool
	Errors *atomic.Int64 // may be nil when Strict
	Log    *slog.Logger  // may be nil
	// Now is the value of now() in microseconds since the Unix epoch.
	Now int64
	// Random is the session's generator for random() and setseed(); nil
	// outside sessions (random() then draws from a global one).
	Random *Random
}

// RowError applies the row-error policy to an error that an operator hit
// while computing one value outside an Evaluator (an aggregate's overflow,
// say): in strict mode it returns err; otherwise err is counted in Errors and
// logged (rate-limited) and the value becomes NULL. Errors that are not
// *sqlerr.Error, or are internal (XX000), are always returned.
func (ctx *Context) RowError(err error) (types.Datum, error) {
	e, ok := err.(*sqlerr.Error)
	if !ok || ctx.Strict || e.Code == sqlerr.InternalError {
		return types.Null, err
	}
	if ctx.Errors != nil {
		ctx.Errors.Add(1)
	}
	operatorLog.report(ctx, "operator", e, 1)
	return types.Null, nil
}

// operatorLog rate-limits the log lines of RowError.
var operatorLog logLimiter

// Evaluator evaluates one compiled expression. It is immutable and safe for
// concurrent use by several goroutines (each with its own Context).
type Evaluator interface {
	// Eval returns a column with one value per row of rec; the caller owns (and must
	// Release) the result. rec's column i has the Arrow type of types.T of the
	// InputRefs that reference index i.
	Eval(ctx *Context, rec arrow.RecordBatch) (arrow.Array, error)
	Type() types.T
}

// Compile compiles e into an Evaluator. Constant subexpressions are folded
// when they evaluate without error (an error is left to happen per row).
// Errors are *sqlerr.Error: 42883 for a function without a kernel, 42846 for a
// cast that does not exist.
func Compile(e ir.Expr) (Evaluator, error) {
	n, err := compile(normalize(e))
	if err != nil {
		return nil, err
	}
	return &evaluator{root: n, t: e.Type(), expr: e}, nil
}

type evaluator struct {
	root node
	t    types.T
	expr ir.Expr
	log  logLimiter
}

func (ev *evaluator) Type() types.T { return ev.t }

func (ev *evaluator) Eval(ctx *Context, rec arrow.RecordBatch) (arrow.Array, error) {
	c := newEctx(ctx, int(rec.NumRows()))
	arr, err := ev.root.eval(c, rec)
	if err != nil {
		return nil, err
	}
	if c.errRows != nil {
		arr = maskRows(c.mem, arr, c.errRows)
		c.report(&ev.log, ev.expr)
	}
	return arr, nil
}

// maskRows returns arr with the rows set in rows made NULL. It takes over
// the caller's reference to arr.
func maskRows(mem memory.Allocator, arr arrow.Array, rows []byte) arrow.Array {
	d := arr.Data()
	if d.DataType().ID() == arrow.NULL {
		return arr
	}
	off, n := d.Offset(), d.Len()
	valid := allocBits(mem, off+n, true)
	vb := valid.Bytes()
	if hasNulls(arr) {
		copy(vb, arr.NullBitmapBytes()[:len(vb)])
	}
	for i := 0; i < n; i++ {
		if bitIsSet(rows, i) {
			clearBit(vb, off+i)
		}
	}
	bufs := append([]*memory.Buffer{valid}, d.Buffers()[1:]...)
	nulls := n - bitutil.CountSetBits(vb, off, n)
	data := array.NewData(d.DataType(), n, bufs, nil, nulls, off)
	out := array.MakeFromData(data)
	data.Release()
	valid.Release()
	arr.Release()
	return out
}

// logLimiter lets through at most one log line per second.
type logLimiter struct {
	last       atomic.Int64 // unix nanos of the last line
	suppressed atomic.Int64 // errors not logged since
}

func (l *logLimiter) report(ctx *Context, what string, first *sqlerr.Error, n int64) {
	if ctx.Log == nil {
		return
	}
	now := time.Now().UnixNano()
	last := l.last.Load()
	if now-last < int64(time.Second) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(n)
		return
	}
	ctx.Log.Warn("expression error; rows set to NULL",
		"expr", what, "code", first.Code, "error", first.Message,
		"rows", n, "suppressed", l.suppressed.Swap(0))
}

// ectx is the state of one evaluation of one batch.
type ectx struct {
	*Context
	mem memory.Allocator
	n   int
	// active is the activity mask (n bits, offset 0): rows whose value can
	// still matter. nil means every row.
	active []byte
	// errRows marks the rows with a row error (lenient mode); nil if none.
	errRows []byte
	first   *sqlerr.Error
	k       kctx
}

func newEctx(ctx *Context, n int) *ectx {
	mem := ctx.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return &ectx{Context: ctx, mem: mem, n: n, k: kctx{now: ctx.Now, rnd: ctx.Random}}
}

// isActive reports whether row i is active.
func (c *ectx) isActive(i int) bool {
	return c.active == nil || bitutil.BitIsSet(c.active, i)
}

// rowErr handles a row error at row i. It returns err when the evaluation
// must fail (strict mode, active row) and nil when the row should become NULL.
func (c *ectx) rowErr(i int, err *sqlerr.Error) error {
	if !c.isActive(i) {
		return nil
	}
	if c.Strict {
		return err
	}
	if c.errRows == nil {
		c.errRows = make([]byte, (c.n+7)>>3)
	}
	c.errRows[i>>3] |= 1 << (i & 7)
	if c.first == nil {
		c.first = err
	}
	return nil
}

// report publishes the counted row errors of a lenient evaluation.
func (c *ectx) report(l *logLimiter, expr ir.Expr) {
	n := int64(countBits(c.errRows, c.n))
	if n == 0 {
		return
	}
	if c.Errors != nil {
		c.Errors.Add(n)
	}
	l.report(c.Context, expr.String(), c.first, n)
}

// withActive runs f with the activity mask set to mask (nil: unchanged).
func (c *ectx) withActive(mask []byte, f func() error) error {
	saved := c.active
	if mask != nil {
		c.active = mask
	}
	err := f()
	c.active = saved
	return err
}

// node is one compiled expression. Nodes are immutable; eval returns a new
// column of n rows that the caller releases.
type node interface {
	typ() types.T
	eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error)
}

// inputNode is an InputRef.
type inputNode struct {
	idx int
	t   types.T
	dt  arrow.DataType // t's Arrow type, nil for Unknown
}

func (n *inputNode) typ() types.T { return n.t }

func (n *inputNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	if n.idx < 0 || n.idx >= int(rec.NumCols()) {
		return nil, sqlerr.New(sqlerr.InternalError, "input column %d out of range (%d columns)", n.idx, rec.NumCols())
	}
	col := rec.Column(n.idx)
	if n.dt != nil && !arrow.TypeEqual(col.DataType(), n.dt) {
		return nil, sqlerr.New(sqlerr.InternalError, "input column %d is %s, expected %s", n.idx, col.DataType(), n.dt)
	}
	col.Retain()
	return col, nil
}

// constNode is a constant. Kernels that specialise constant operands read d
// directly; eval materialises it only for generic consumers.
type constNode struct {
	t types.T
	d types.Datum
}

func (n *constNode) typ() types.T { return n.t }

func (n *constNode) eval(c *ectx, _ arrow.RecordBatch) (arrow.Array, error) {
	return ConstArray(c.mem, n.t, n.d, c.n), nil
}

func asConst(n node) (*constNode, bool) {
	k, ok := n.(*constNode)
	return k, ok
}

// evalArgs evaluates the non-constant nodes of args; the result has nil for
// constants. On error every column evaluated so far is released.
func evalArgs(c *ectx, rec arrow.RecordBatch, args []node) ([]arrow.Array, error) {
	cols := make([]arrow.Array, len(args))
	for i, a := range args {
		if _, ok := asConst(a); ok {
			continue
		}
		col, err := a.eval(c, rec)
		if err != nil {
			releaseAll(cols)
			return nil, err
		}
		cols[i] = col
	}
	return cols, nil
}

func releaseAll(cols []arrow.Array) {
	for _, a := range cols {
		if a != nil {
			a.Release()
		}
	}
}

// rowNode evaluates a function by calling its scalar kernel on each row.
type rowNode struct {
	t      types.T
	fn     scalarFn
	args   []node
	strict bool
}

func (r *rowNode) typ() types.T { return r.t }

func (r *rowNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	cols, err := evalArgs(c, rec, r.args)
	if err != nil {
		return nil, err
	}
	defer releaseAll(cols)
	reads := make([]func(int) types.Datum, len(r.args))
	ds := make([]types.Datum, len(r.args))
	for j, a := range r.args {
		if k, ok := asConst(a); ok {
			d := k.d
			reads[j] = func(int) types.Datum { return d }
		} else {
			reads[j] = reader(a.typ(), cols[j])
		}
	}
	b := newColBuilder(c.mem, r.t, c.n)
	for i := 0; i < c.n; i++ {
		if !c.isActive(i) {
			b.appendNull()
			continue
		}
		null := false
		for j := range ds {
			ds[j] = reads[j](i)
			null = null || ds[j].Null
		}
		if null && r.strict {
			b.appendNull()
			continue
		}
		d, kerr := r.fn(&c.k, ds)
		if kerr != nil {
			if err := c.rowErr(i, kerr); err != nil {
				b.release()
				return nil, err
			}
			b.appendNull()
			continue
		}
		b.append(d)
	}
	return b.finish(), nil
}
