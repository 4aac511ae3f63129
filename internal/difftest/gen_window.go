package difftest

import (
	"strconv"
	"strings"
)

// windowed returns SELECT columns, window function calls FROM src [WHERE].
//
// The results must not depend on how either system orders peers, so the
// functions that see the order of rows (row_number, ntile, lag, lead,
// first_value, last_value, nth_value, ROWS frames) are used only when the
// window is ordered by every column of src: rows that still tie are alike,
// and which of them comes first changes nothing. Otherwise the calls are
// the ones that see peer groups only: rank, dense_rank, percent_rank,
// cume_dist, and aggregates over RANGE and GROUPS frames.
func (g *gen) windowed(src *relation) (string, []expr) {
	kc := &ectx{cols: src.cols, exact: true, grouping: true}
	keys := kc.usable()
	var part []string
	for n := g.intn(3); n > 0 && len(keys) > 0; n-- {
		part = append(part, pick(g, keys).sql)
	}
	var order []expr
	var orderSQL []string
	addKey := func(k expr) {
		dir := pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
		order = append(order, k)
		orderSQL = append(orderSQL, k.sql+dir)
	}
	total := len(keys) == len(src.cols) && len(keys) > 0 && g.chance(0.6)
	if total {
		for _, i := range g.rng.Perm(len(keys)) {
			addKey(keys[i])
		}
	} else if len(keys) > 0 {
		for n := g.intn(3); n > 0; n-- {
			addKey(pick(g, keys))
		}
	}
	spec := ""
	if len(part) > 0 {
		spec = "PARTITION BY " + strings.Join(part, ", ")
	}
	if len(order) > 0 {
		spec = strings.TrimSpace(spec + " ORDER BY " + strings.Join(orderSQL, ", "))
	}
	named := g.chance(0.3)
	c := &ectx{cols: src.cols}
	var outs []expr
	var items []string
	if len(src.cols) > 0 && g.chance(0.7) {
		col := pick(g, src.cols)
		outs = append(outs, col)
		items = append(items, g.item(col, 1))
	}
	for n := 1 + g.intn(3); n > 0; n-- {
		e, frame := g.windowCall(c, total, order)
		over := "(" + strings.TrimSpace(spec+" "+frame) + ")"
		if named {
			over = "w"
			if frame != "" {
				over = "(w " + frame + ")"
			}
		}
		e.sql += " OVER " + over
		outs = append(outs, e)
		items = append(items, g.item(e, len(outs)))
	}
	cond := ""
	if g.chance(0.4) {
		cond = g.where(&ectx{cols: src.cols}, src)
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM " + src.name + whereOf(src, cond)
	if named {
		q += " WINDOW w AS (" + spec + ")"
	}
	return q, outs
}

// windowCall returns a window function call (without OVER) and its frame
// clause ("" for none); total says whether the window orders rows totally
// (see windowed), order are its ORDER BY keys.
func (g *gen) windowCall(c *ectx, total bool, order []expr) (expr, string) {
	ints := func(max int) string { return strconv.Itoa(g.intn(max + 1)) }
	if total && g.chance(0.5) {
		col := pick(g, c.cols)
		switch g.intn(6) {
		case 0:
			return expr{sql: "row_number()", t: tBigint, bound: maxRows}, ""
		case 1:
			n := 1 + g.intn(4)
			return expr{sql: "ntile(" + strconv.Itoa(n) + ")", t: tInt, bound: float64(n)}, ""
		case 2, 3:
			fn := pick(g, []string{"lag", "lead"})
			args := col.sql
			e := col
			e.lit = false
			if g.chance(0.7) {
				args += ", " + ints(3)
				if g.chance(0.5) && col.t != tBool {
					def := g.nonNullLiteral(col.t)
					args += ", " + def.sql
					e = merge(col.t, col, def)
				}
			}
			e.sql = fn + "(" + args + ")"
			return e, ""
		default:
			e := col
			e.lit = false
			switch g.intn(3) {
			case 0:
				e.sql = "first_value(" + col.sql + ")"
			case 1:
				e.sql = "last_value(" + col.sql + ")"
			default:
				e.sql = "nth_value(" + col.sql + ", " + strconv.Itoa(1+g.intn(3)) + ")"
			}
			return e, g.frame(total, order)
		}
	}
	if g.chance(0.3) {
		fn := pick(g, []string{"rank()", "dense_rank()", "percent_rank()", "cume_dist()"})
		if strings.HasPrefix(fn, "percent") || strings.HasPrefix(fn, "cume") {
			return expr{sql: fn, t: tFloat, bound: 1}, ""
		}
		return expr{sql: fn, t: tBigint, bound: maxRows}, ""
	}
	return g.windowAggregate(c), g.frame(total, order)
}

// windowAggregate returns an aggregate call, maybe with FILTER.
func (g *gen) windowAggregate(c *ectx) expr {
	filter := ""
	if g.chance(0.2) {
		filter = " FILTER (WHERE " + g.expr(c, tBool, 1).sql + ")"
	}
	switch g.intn(5) {
	case 0:
		return expr{sql: "count(*)" + filter, t: tBigint, bound: maxRows}
	case 1:
		a := g.expr(c, g.someType(c, columnTypes), 1)
		return expr{sql: "count(" + a.sql + ")" + filter, t: tBigint, bound: maxRows}
	case 2, 3:
		t := g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat})
		a := g.expr(c, t, 1)
		e := a
		e.lit = false
		if g.chance(0.5) {
			e.sql = "sum(" + a.sql + ")" + filter
			e.bound = a.bound * maxRows
			switch t {
			case tSmallint, tInt:
				e.t = tBigint
			case tBigint:
				e.t = tNumeric
			case tFloat:
				e.approx = a.approx || !a.dyadic
			}
			return e
		}
		e.sql = "avg(" + a.sql + ")" + filter
		if t == tFloat {
			e.approx, e.dyadic = true, false
		} else {
			e.t, e.approx, e.scale = tNumeric, true, maxScale
		}
		return e
	}
	t := g.someType(c, []typ{tSmallint, tInt, tBigint, tNumeric, tFloat, tText, tDate, tTimestamp, tInterval})
	a := g.expr(c, t, 1)
	e := a
	e.lit = false
	if a.ambiguous {
		e.approx = true
	}
	e.sql = pick(g, []string{"min", "max"}) + "(" + a.sql + ")" + filter
	return e
}

// frame returns a random frame clause, or "" for the default. Without a
// total order only RANGE and GROUPS frames are deterministic; RANGE with
// offsets needs a single ORDER BY key of a type with offsets.
func (g *gen) frame(total bool, order []expr) string {
	if g.chance(0.3) {
		return ""
	}
	modes := []string{"RANGE"}
	if len(order) > 0 {
		modes = append(modes, "GROUPS")
	}
	if total {
		modes = append(modes, "ROWS", "ROWS")
	}
	mode := pick(g, modes)
	offset := func() (string, bool) {
		switch mode {
		case "ROWS", "GROUPS":
			return strconv.Itoa(g.intn(4)), true
		}
		if len(order) != 1 {
			return "", false
		}
		switch order[0].t {
		case tSmallint, tInt, tBigint:
			return strconv.Itoa(g.intn(6)), true
		case tNumeric:
			return pick(g, []string{"0.5", "1.25", "0"}), true
		case tFloat:
			return pick(g, []string{"0.5", "2", "0"}), true
		case tDate, tTimestamp:
			return pick(g, []string{"'1 day'", "'2 hours'", "'1 mon'", "'0 days'"}), true
		}
		return "", false
	}
	// Bounds in order: a frame must not start after it ends in kind.
	bound := func(start bool) (string, int) {
		for {
			k := g.intn(5)
			switch {
			case k == 0 && start:
				return "UNBOUNDED PRECEDING", 0
			case k == 4 && !start:
				return "UNBOUNDED FOLLOWING", 4
			case k == 2:
				return "CURRENT ROW", 2
			case k == 1 || k == 3:
				if off, ok := offset(); ok {
					if k == 1 {
						return off + " PRECEDING", 1
					}
					return off + " FOLLOWING", 3
				}
			}
		}
	}
	s, sk := bound(true)
	e, ek := bound(false)
	for ek < sk || (sk == 3 && ek == 2) {
		e, ek = bound(false)
	}
	f := mode + " BETWEEN " + s + " AND " + e
	if g.chance(0.3) {
		excludes := []string{" EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE TIES", " EXCLUDE NO OTHERS"}
		// PostgreSQL 15 departs from the standard here: last_value over a
		// ROWS frame that ends n PRECEDING with EXCLUDE TIES, when the
		// frame's last row is a peer of the current row, can return NULL
		// where the frame, as sum() and array_agg() over it show, still
		// holds rows (seed 815238577; rows 0..7 ordered by 1, 2, 4, 4, 4,
		// 4, 4, 5: the sixth row's frame is {0, 1}, its last_value NULL).
		// streamsql follows the standard, so these frames do not exclude
		// ties.
		if mode == "ROWS" && ek == 1 {
			excludes = []string{" EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE NO OTHERS"}
		}
		f += pick(g, excludes)
	}
	return f
}

// ranked returns a group TopN: the rows of src whose rank in their
// partition, by row_number(), rank() or dense_rank(), passes a bound (rn <=
// N, rn = 1, rn < N, BETWEEN), which streamsql maintains with a TopN per
// partition instead of the window operator. row_number() is used only over
// a total order (see windowed), so that which peer it keeps cannot differ.
func (g *gen) ranked(src *relation) (string, []expr) {
	kc := &ectx{cols: src.cols, exact: true, grouping: true}
	keys := kc.usable()
	if len(keys) == 0 {
		return g.windowed(src)
	}
	var part []string
	for n := g.intn(3); n > 0; n-- {
		part = append(part, pick(g, keys).sql)
	}
	var order []string
	total := len(keys) == len(src.cols) && g.chance(0.6)
	orderKeys := []expr{pick(g, keys)}
	if total {
		orderKeys = nil
		for _, i := range g.rng.Perm(len(keys)) {
			orderKeys = append(orderKeys, keys[i])
		}
	}
	for _, k := range orderKeys {
		order = append(order, k.sql+pick(g, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}))
	}
	fn := pick(g, []string{"rank()", "dense_rank()"})
	if total && g.chance(0.6) {
		fn = "row_number()"
	}
	spec := "ORDER BY " + strings.Join(order, ", ")
	if len(part) > 0 {
		spec = "PARTITION BY " + strings.Join(part, ", ") + " " + spec
	}
	n := 1 + g.intn(3)
	bound := pick(g, []string{
		"rn <= " + strconv.Itoa(n), "rn < " + strconv.Itoa(n+1), "rn = 1",
		"rn BETWEEN 2 AND " + strconv.Itoa(n+1), strconv.Itoa(n) + " >= rn",
	})
	// The inner query names src's columns x1, x2, ... (src may be a join,
	// whose columns are qualified).
	var inner []string
	var outs []expr
	var items []string
	for i, c := range src.cols {
		alias := "x" + strconv.Itoa(i+1)
		inner = append(inner, c.sql+" AS "+alias)
		if g.chance(0.7) || len(outs) == 0 {
			e := c
			e.sql = "t." + alias
			outs = append(outs, e)
			items = append(items, g.item(e, len(outs)))
		}
	}
	if g.chance(0.7) {
		rn := expr{sql: "t.rn", t: tBigint, bound: maxRows}
		outs = append(outs, rn)
		items = append(items, g.item(rn, len(outs)))
	}
	q := "SELECT " + strings.Join(items, ", ") + " FROM (SELECT " + strings.Join(inner, ", ") + ", " + fn + " OVER (" + spec +
		") AS rn FROM " + src.name + whereOf(src, "") + ") AS t WHERE " + bound
	return q, outs
}
