package slt

import (
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
	}{
		{nil, "NULL"},
		{[]byte{}, "(empty)"},
		{[]byte("x y"), "x y"},
		{[]byte("NULL"), "NULL"},
	} {
		if got := formatValue(tc.in); got != tc.want {
			t.Errorf("formatValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompareResult(t *testing.T) {
	rows := queryResult{{"2", "y"}, {"1", "x"}, {"3", "NULL"}}
	for _, tc := range []struct {
		name     string
		types    string
		sort     sortMode
		expected string // lines joined by |
		res      queryResult
		ok       bool
	}{
		{"rows in order", "IT", noSort, "2 y|1 x|3 NULL", rows, true},
		{"rows out of order", "IT", noSort, "1 x|2 y|3 NULL", rows, false},
		{"rows with extra spaces", "IT", noSort, "2  y|  1 x |3\tNULL", rows, true},
		{"values in order", "IT", noSort, "2|y|1|x|3|NULL", rows, true},
		{"values out of order", "IT", noSort, "1|x|2|y|3|NULL", rows, false},
		{"values too few", "IT", noSort, "2|y|1|x|3", rows, false},
		{"rowsort", "IT", rowSort, "3 NULL|1 x|2 y", rows, true},
		{"rowsort values", "IT", rowSort, "3|NULL|1|x|2|y", rows, true},
		{"rowsort missing row", "IT", rowSort, "1 x|2 y", rows, false},
		{"rowsort wrong value", "IT", rowSort, "1 x|2 y|3 z", rows, false},
		{"valuesort", "IT", valueSort, "1|2|3|NULL|x|y", rows, true},
		{"valuesort rows", "IT", valueSort, "x 1|y 2|NULL 3", rows, true},
		{"valuesort wrong", "IT", valueSort, "1|2|3|NULL|x|x", rows, false},
		{"single column", "I", noSort, "1|2", queryResult{{"1"}, {"2"}}, true},
		{"value with spaces", "TI", noSort, "a b 1", queryResult{{"a  b", "1"}}, true},
		// One value per line, values with as many words as columns.
		{"values with spaces", "IT", rowSort, "2|t row 2|1|t row 1", queryResult{{"1", "t row 1"}, {"2", "t row 2"}}, true},
		{"values with spaces, wrong value", "IT", rowSort, "2|t row 2|1|t row 3", queryResult{{"1", "t row 1"}, {"2", "t row 2"}}, false},
		{"values with spaces, rows", "TT", noSort, "a b|c d", queryResult{{"a", "b"}, {"c", "d"}}, true},
		{"values with spaces, one row", "TT", noSort, "a b|c d", queryResult{{"a b", "c d"}}, true},
		{"values with spaces, row missing", "TT", noSort, "a b|c d", queryResult{{"a", "b"}}, false},
		{"no rows expected", "I", noSort, "", queryResult{}, true},
		{"no rows expected, some returned", "I", noSort, "", queryResult{{"1"}}, false},
		{"rows expected, none returned", "I", noSort, "1", queryResult{}, false},
		{"empty string", "T", noSort, "(empty)", queryResult{{"(empty)"}}, true},
		// md5 of "2\ny\n1\nx\n3\nNULL\n" and, rowsorted, of "1\nx\n2\ny\n3\nNULL\n".
		{"hash", "IT", noSort, "6 values hashing to 4c5c1fd896ff9315c96fdc457d06327e", rows, true},
		{"hash rowsort", "IT", rowSort, "6 values hashing to 93e4a6512b9136860d88254e4896cdb2", rows, true},
		{"hash wrong count", "IT", noSort, "5 values hashing to 4c5c1fd896ff9315c96fdc457d06327e", rows, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &record{types: tc.types, sort: tc.sort}
			if tc.expected != "" {
				rec.expected = strings.Split(tc.expected, "|")
			}
			msg := compareResult(rec, tc.res)
			if (msg == "") != tc.ok {
				t.Fatalf("compareResult = %q, want ok=%v", msg, tc.ok)
			}
		})
	}
}

func TestCompareResultMessage(t *testing.T) {
	// The actual result is shown in the file's layout and sort order.
	rec := &record{types: "IT", sort: rowSort, expected: []string{"1", "x", "3", "z"}}
	msg := compareResult(rec, queryResult{{"3", "z"}, {"1", "y"}})
	want := `query result differs (rowsort, 2 rows)
expected:
    1
    x
    3
    z
actual:
    1
    y
    3
    z`
	if msg != want {
		t.Errorf("message:\n%s\nwant:\n%s", msg, want)
	}

	rec = &record{types: "IT", expected: []string{"1 x"}}
	msg = compareResult(rec, queryResult{})
	want = `query result differs (nosort, 0 rows)
expected:
    1 x
actual:
    (no rows)`
	if msg != want {
		t.Errorf("message:\n%s\nwant:\n%s", msg, want)
	}
}
