package slt

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// formatValue renders one text-format value as test files write it: NULL as
// NULL, the empty string as (empty), anything else unchanged.
func formatValue(v []byte) string {
	if v == nil {
		return "NULL"
	}
	if len(v) == 0 {
		return "(empty)"
	}
	return string(v)
}

// normalize collapses each run of whitespace to one space and trims the ends:
// results compare as whitespace-separated words.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// hashPattern matches classic sqllogictest's hashed results.
var hashPattern = regexp.MustCompile(`^(\d+) values hashing to ([0-9a-f]{32})$`)

// queryResult is the rendered result of a query: one []string of formatted
// values per row.
type queryResult [][]string

// sorted returns the rows as normalized lines in the order mode compares
// them, and the values in that order. The receiver is not modified.
func (r queryResult) sorted(mode sortMode) (lines []string, values []string) {
	rows := slices.Clone([][]string(r))
	if mode == rowSort {
		slices.SortStableFunc(rows, func(a, b []string) int {
			return strings.Compare(normalize(strings.Join(a, " ")), normalize(strings.Join(b, " ")))
		})
	}
	for _, row := range rows {
		lines = append(lines, normalize(strings.Join(row, " ")))
		for _, v := range row {
			values = append(values, normalize(v))
		}
	}
	if mode == valueSort {
		slices.Sort(values)
	}
	return lines, values
}

// key returns a canonical form of the result under mode, for comparing
// labelled queries with each other.
func (r queryResult) key(mode sortMode) string {
	lines, values := r.sorted(mode)
	if mode == valueSort {
		return strings.Join(values, "\n")
	}
	return strings.Join(lines, "\n")
}

// compareResult compares a query's result with what rec expects. It returns
// "" when they match, and otherwise a message showing expected and actual.
//
// Expected results are either one row per line (values separated by
// whitespace) or, as classic sqllogictest writes them, one value per line.
// A query with more than one column uses the second layout when every
// expected line has fewer words than the query has columns, which no row
// line can have, or when there are exactly rows*columns expected lines:
// values that contain spaces ("table tn4 row 83") make the word count
// ambiguous, the line count is not. Words are compared with whitespace
// normalized, so values that contain spaces still compare in the row
// layout.
func compareResult(rec *record, res queryResult) string {
	cols := len(rec.types)
	if len(rec.expected) == 1 {
		if m := hashPattern.FindStringSubmatch(strings.TrimSpace(rec.expected[0])); m != nil {
			return compareHash(rec, res, m[1], m[2])
		}
	}

	valueLayout := cols > 1 && len(rec.expected) > 0
	if valueLayout && len(rec.expected) != len(res)*cols {
		for _, l := range rec.expected {
			if len(strings.Fields(l)) >= cols {
				valueLayout = false
				break
			}
		}
	}

	lines, values := res.sorted(rec.sort)
	var equal bool
	switch rec.sort {
	case valueSort:
		var want, got []string
		for _, l := range rec.expected {
			want = append(want, strings.Fields(l)...)
		}
		for _, l := range lines {
			got = append(got, strings.Fields(l)...)
		}
		slices.Sort(want)
		slices.Sort(got)
		equal = slices.Equal(want, got)
	default:
		var want []string
		if valueLayout {
			for i := 0; i < len(rec.expected); i += cols {
				var row []string
				for _, l := range rec.expected[i:min(i+cols, len(rec.expected))] {
					row = append(row, normalize(l))
				}
				want = append(want, strings.Join(row, " "))
			}
		} else {
			for _, l := range rec.expected {
				want = append(want, normalize(l))
			}
		}
		if rec.sort == rowSort {
			slices.Sort(want) // lines are sorted already
		}
		equal = slices.Equal(want, lines)
	}
	if equal {
		return ""
	}

	// Show the actual result in the layout and order the file uses.
	var actual []string
	switch {
	case valueLayout:
		actual = values
	case rec.sort == valueSort:
		for i := 0; i < len(values); i += max(cols, 1) {
			actual = append(actual, strings.Join(values[i:min(i+max(cols, 1), len(values))], " "))
		}
	default:
		actual = lines
	}
	return fmt.Sprintf("query result differs (%s, %d rows)\nexpected:\n%s\nactual:\n%s",
		rec.sort, len(res), indentLines(rec.expected), indentLines(actual))
}

// compareHash checks res against a "N values hashing to H" line: the MD5 of
// every value, in the order of the sort mode, each followed by a newline.
func compareHash(rec *record, res queryResult, count, hash string) string {
	_, values := res.sorted(rec.sort)
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	got := hex.EncodeToString(h.Sum(nil))
	if strconv.Itoa(len(values)) == count && got == hash {
		return ""
	}
	return fmt.Sprintf("query result differs (%s)\nexpected:\n    %s values hashing to %s\nactual:\n    %d values hashing to %s",
		rec.sort, count, hash, len(values), got)
}

// indentLines formats lines one per line, indented, for failure messages.
func indentLines(lines []string) string {
	if len(lines) == 0 {
		return "    (no rows)"
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("    ")
		b.WriteString(l)
	}
	return b.String()
}
