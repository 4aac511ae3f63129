package difftest

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// PostgreSQL type OIDs the comparison treats specially.
const (
	oidInt8     = 20
	oidInt2     = 21
	oidInt4     = 23
	oidFloat4   = 700
	oidFloat8   = 701
	oidNumeric  = 1700
	oidText     = 25
	oidVarchar  = 1043
	oidInterval = 1186
	oidRecord   = 2249
	// oidFirstUser is the first OID of user objects, such as the
	// composite types of gen_struct.go.
	oidFirstUser = 16384
)

// sameType reports whether type OIDs a and b describe the same streamsql
// type: streamsql has one string type and describes every string column as
// varchar, where PostgreSQL says text; it describes structs as record,
// where PostgreSQL gives the OID of the composite type (a user type's).
func sameType(a, b uint32) bool {
	norm := func(o uint32) uint32 {
		switch {
		case o == oidVarchar:
			return oidText
		case o >= oidFirstUser:
			return oidRecord
		}
		return o
	}
	return norm(a) == norm(b)
}

// tolerance is the largest difference between two floats that still
// compare equal, relative to the larger of their magnitudes and 1: floats
// summed in a different order differ in the last bits. Numerics compare
// exactly, display scale included.
const tolerance = 1e-9

// result is a query result in text format.
type result struct {
	names []string
	oids  []uint32
	// rows hold the values as sent; nil is NULL.
	rows [][][]byte
}

// kind says how a column's values compare.
type kind uint8

const (
	kindText   kind = iota // byte for byte
	kindInt                // integers and numerics: exactly (numerics with their scale)
	kindNumber             // floats: numerically, with tolerance
	// kindInterval: as text, but an interval that differs only in how it
	// is spelled (24:00:00 and 1 day, 30 days and 1 mon) still pairs with
	// the other, as PostgreSQL's = says they are equal; which spelling a
	// group key or min() shows depends on the order rows came in.
	kindInterval
)

func kindOf(oid uint32) kind {
	switch oid {
	case oidInt2, oidInt4, oidInt8, oidNumeric:
		return kindInt
	case oidFloat4, oidFloat8:
		return kindNumber
	case oidInterval:
		return kindInterval
	}
	return kindText
}

// cell is one normalised value.
type cell struct {
	null bool
	num  float64 // kindNumber; kindInterval: microseconds, a month being 30 days
	text string  // the value as sent
}

// row is a normalised row: its cells and a key that is equal for rows
// whose cells are exactly equal.
type row struct {
	cells []cell
	key   string
}

// normalise parses r's rows by the kinds of cols.
func normalise(r *result, kinds []kind) ([]row, error) {
	out := make([]row, 0, len(r.rows))
	var kb strings.Builder
	for _, raw := range r.rows {
		if len(raw) != len(kinds) {
			return nil, fmt.Errorf("row has %d values, want %d", len(raw), len(kinds))
		}
		rw := row{cells: make([]cell, len(raw))}
		kb.Reset()
		for i, v := range raw {
			c := &rw.cells[i]
			if v == nil {
				c.null = true
				kb.WriteString("\x00N\x00")
				continue
			}
			c.text = string(v)
			switch kinds[i] {
			case kindNumber:
				f, err := parseNumber(c.text)
				if err != nil {
					return nil, fmt.Errorf("column %d: %v", i+1, err)
				}
				c.num = f
				kb.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			case kindInt:
				// Canonical already; a leading + or zeros would be a bug
				// worth seeing.
				kb.WriteString(c.text)
			case kindInterval:
				us, err := parseInterval(c.text)
				if err != nil {
					return nil, fmt.Errorf("column %d: %v", i+1, err)
				}
				c.num = us
				kb.WriteString(strconv.Quote(c.text))
			default:
				kb.WriteString(strconv.Quote(c.text))
			}
			kb.WriteByte(0)
		}
		rw.key = kb.String()
		out = append(out, rw)
	}
	return out, nil
}

// parseNumber parses PostgreSQL's text form of a numeric or float.
func parseNumber(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRangeErr(err) {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return f, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// parseInterval parses PostgreSQL's default (IntervalStyle postgres) text
// form of an interval, such as "1 year 2 mons -3 days +04:05:06.5", into
// microseconds, counting a month as 30 days and a day as 24 hours as
// PostgreSQL does when it compares intervals.
func parseInterval(s string) (float64, error) {
	bad := fmt.Errorf("not an interval: %q", s)
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, bad
	}
	var months, days, us float64
	for i := 0; i < len(f); i++ {
		if strings.Contains(f[i], ":") {
			t := f[i]
			sign := 1.0
			if t[0] == '-' || t[0] == '+' {
				if t[0] == '-' {
					sign = -1
				}
				t = t[1:]
			}
			hms := strings.Split(t, ":")
			if len(hms) != 3 {
				return 0, bad
			}
			h, err1 := strconv.ParseFloat(hms[0], 64)
			m, err2 := strconv.ParseFloat(hms[1], 64)
			sec, err3 := strconv.ParseFloat(hms[2], 64)
			if err1 != nil || err2 != nil || err3 != nil {
				return 0, bad
			}
			us += sign * (h*3600e6 + m*60e6 + math.Round(sec*1e6))
			continue
		}
		if i+1 >= len(f) {
			return 0, bad
		}
		n, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return 0, bad
		}
		switch strings.TrimSuffix(f[i+1], "s") {
		case "year":
			months += 12 * n
		case "mon":
			months += n
		case "day":
			days += n
		default:
			return 0, bad
		}
		i++
	}
	return (months*30+days)*86400e6 + us, nil
}

// numbersClose reports whether a and b are equal within tolerance.
func numbersClose(a, b float64) bool {
	if a == b || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return false
	}
	scale := math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	return math.Abs(a-b) <= tolerance*scale
}

// rowsClose reports whether a and b are equal, numbers within tolerance.
func rowsClose(a, b row, kinds []kind) bool {
	for i, k := range kinds {
		x, y := a.cells[i], b.cells[i]
		if x.null || y.null {
			if x.null != y.null {
				return false
			}
			continue
		}
		switch k {
		case kindNumber:
			if !numbersClose(x.num, y.num) {
				return false
			}
		case kindInterval:
			if x.num != y.num {
				return false
			}
		default:
			if x.text != y.text {
				return false
			}
		}
	}
	return true
}

// diff compares got with want as multisets of rows. It returns "" when they
// are equal, and otherwise a description of the difference: the rows only
// one side has, and column types that differ. want's column types decide how
// values compare.
func diff(want, got *result) string {
	if len(want.oids) != len(got.oids) {
		return fmt.Sprintf("want %d columns %v, got %d columns %v", len(want.oids), want.names, len(got.oids), got.names)
	}
	var msgs []string
	kinds := make([]kind, len(want.oids))
	for i, oid := range want.oids {
		kinds[i] = kindOf(oid)
		if !sameType(got.oids[i], oid) {
			msgs = append(msgs, fmt.Sprintf("column %d (%s) has type OID %d, want %d", i+1, want.names[i], got.oids[i], oid))
		}
		if got.names[i] != want.names[i] {
			msgs = append(msgs, fmt.Sprintf("column %d is named %q, want %q", i+1, got.names[i], want.names[i]))
		}
	}
	wr, err := normalise(want, kinds)
	if err != nil {
		return "reference result: " + err.Error()
	}
	gr, err := normalise(got, kinds)
	if err != nil {
		return "streamsql result: " + err.Error()
	}
	onlyWant, onlyGot := matchRows(wr, gr, kinds)
	if len(onlyWant) > 0 || len(onlyGot) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d rows expected, %d got", len(wr), len(gr)))
		for i, r := range onlyWant {
			if i == maxShownRows/2 {
				msgs = append(msgs, fmt.Sprintf("  ... %d more missing", len(onlyWant)-i))
				break
			}
			msgs = append(msgs, "  missing:    "+formatRow(r))
		}
		for i, r := range onlyGot {
			if i == maxShownRows/2 {
				msgs = append(msgs, fmt.Sprintf("  ... %d more unexpected", len(onlyGot)-i))
				break
			}
			msgs = append(msgs, "  unexpected: "+formatRow(r))
		}
	}
	return strings.Join(msgs, "\n")
}

// matchRows pairs rows of a with equal rows of b, exactly equal ones first,
// then within tolerance, and returns the rows of each side left unpaired.
func matchRows(a, b []row, kinds []kind) (onlyA, onlyB []row) {
	byKey := func(x, y row) int { return strings.Compare(x.key, y.key) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, byKey)
	slices.SortFunc(b, byKey)
	var restA, restB []row
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i].key, b[j].key); {
		case c == 0:
			i++
			j++
		case c < 0:
			restA = append(restA, a[i])
			i++
		default:
			restB = append(restB, b[j])
			j++
		}
	}
	restA = append(restA, a[i:]...)
	restB = append(restB, b[j:]...)
	// The rest differ in numbers at most: pair them greedily (the value
	// domains make near-equal distinct numbers rare).
	used := make([]bool, len(restB))
	for _, x := range restA {
		found := false
		for k, y := range restB {
			if !used[k] && rowsClose(x, y, kinds) {
				used[k], found = true, true
				break
			}
		}
		if !found {
			onlyA = append(onlyA, x)
		}
	}
	for k, y := range restB {
		if !used[k] {
			onlyB = append(onlyB, y)
		}
	}
	return onlyA, onlyB
}

func formatRow(r row) string {
	parts := make([]string, len(r.cells))
	for i, c := range r.cells {
		if c.null {
			parts[i] = "NULL"
		} else {
			parts[i] = strconv.Quote(c.text)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// maxShownRows bounds the rows formatResult shows.
const maxShownRows = 60

// formatResult renders a result for failure messages, rows sorted, at most
// maxShownRows of them.
func formatResult(r *result) string {
	lines := make([]string, 0, len(r.rows)+1)
	lines = append(lines, strings.Join(r.names, " | "))
	var rows []string
	for _, raw := range r.rows {
		parts := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		rows = append(rows, strings.Join(parts, " | "))
	}
	slices.Sort(rows)
	if len(rows) > maxShownRows {
		rows = append(rows[:maxShownRows], fmt.Sprintf("... %d more rows", len(rows)-maxShownRows))
	}
	return strings.Join(append(lines, rows...), "\n")
}
