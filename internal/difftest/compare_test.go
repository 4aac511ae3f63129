package difftest

import (
	"strings"
	"testing"
)

// res builds a result with the given column type OIDs; each row is a list
// of values, "NULL" for NULL.
func res(oids []uint32, rows ...[]string) *result {
	r := &result{oids: oids}
	for i := range oids {
		r.names = append(r.names, "c"+string(rune('1'+i)))
	}
	for _, row := range rows {
		var vals [][]byte
		for _, v := range row {
			if v == "NULL" {
				vals = append(vals, nil)
			} else {
				vals = append(vals, []byte(v))
			}
		}
		r.rows = append(r.rows, vals)
	}
	return r
}

func TestDiff(t *testing.T) {
	num := []uint32{oidNumeric}
	tests := []struct {
		name string
		want *result
		got  *result
		// diff is a substring of the difference, "" for none.
		diff string
	}{
		{"order does not matter",
			res([]uint32{oidInt4, oidText}, []string{"1", "a"}, []string{"2", "b"}),
			res([]uint32{oidInt4, oidVarchar}, []string{"2", "b"}, []string{"1", "a"}), ""},
		{"multiplicity matters",
			res([]uint32{oidInt4}, []string{"1"}, []string{"1"}, []string{"2"}),
			res([]uint32{oidInt4}, []string{"1"}, []string{"2"}, []string{"2"}),
			"missing:    (\"1\")"},
		{"numeric scales", res(num, []string{"1.5000000000000000"}, []string{"0.33333333333333333333"}),
			res(num, []string{"0.33333333333333333333"}, []string{"1.5000000000000000"}), ""},
		{"numeric trailing zeros count", res(num, []string{"2.50"}), res(num, []string{"2.5"}), "missing"},
		{"beyond tolerance", res([]uint32{oidFloat8}, []string{"1.0"}), res([]uint32{oidFloat8}, []string{"1.00001"}), "unexpected: (\"1.00001\")"},
		{"tolerance is relative for large numbers",
			res([]uint32{oidFloat8}, []string{"1e+20"}), res([]uint32{oidFloat8}, []string{"1.00000000001e+20"}), ""},
		{"tolerance is absolute near zero",
			res([]uint32{oidFloat8}, []string{"0"}), res([]uint32{oidFloat8}, []string{"5.551115123125783e-17"}), ""},
		{"NaN and infinities", res([]uint32{oidFloat8}, []string{"NaN"}, []string{"-Infinity"}),
			res([]uint32{oidFloat8}, []string{"-Infinity"}, []string{"NaN"}), ""},
		{"NaN is not infinity", res([]uint32{oidFloat8}, []string{"Infinity"}),
			res([]uint32{oidFloat8}, []string{"NaN"}), "missing"},
		{"NULL is not zero", res(num, []string{"0"}), res(num, []string{"NULL"}), "unexpected: (NULL)"},
		{"NULL equals NULL", res([]uint32{oidText}, []string{"NULL"}), res([]uint32{oidText}, []string{"NULL"}), ""},
		{"integers exactly", res([]uint32{oidInt8}, []string{"10"}), res([]uint32{oidInt8}, []string{"10.0"}), "missing"},
		{"text exactly", res([]uint32{oidText}, []string{"a "}), res([]uint32{oidText}, []string{"a"}), "missing"},
		{"empty text is not NULL", res([]uint32{oidText}, []string{""}), res([]uint32{oidText}, []string{"NULL"}), "missing"},
		{"type OIDs", res([]uint32{oidInt2}, []string{"1"}), res([]uint32{oidInt4}, []string{"1"}), "has type OID 23, want 21"},
		{"column count", res([]uint32{oidInt4, oidInt4}), res([]uint32{oidInt4}), "want 2 columns"},
		{"column names", res([]uint32{oidInt4}), &result{names: []string{"x"}, oids: []uint32{oidInt4}}, `named "x", want "c1"`},
		{"interval spellings pair", res([]uint32{oidInterval}, []string{"1 day"}, []string{"1 mon"}),
			res([]uint32{oidInterval}, []string{"30 days"}, []string{"24:00:00"}), ""},
		{"different intervals", res([]uint32{oidInterval}, []string{"1 day"}),
			res([]uint32{oidInterval}, []string{"1 day 00:00:01"}), "missing"},
		{"unparsable number", res([]uint32{oidFloat8}, []string{"x"}), res([]uint32{oidFloat8}, []string{"1"}), "reference result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := diff(tc.want, tc.got)
			switch {
			case tc.diff == "" && d != "":
				t.Errorf("unexpected difference:\n%s", d)
			case tc.diff != "" && !strings.Contains(d, tc.diff):
				t.Errorf("difference %q does not contain %q", d, tc.diff)
			}
		})
	}
}

func TestParseInterval(t *testing.T) {
	const day, hour = 86400e6, 3600e6
	tests := map[string]float64{
		"00:00:00":                          0,
		"1 day":                             day,
		"24:00:00":                          day,
		"1 mon":                             30 * day,
		"2 mons":                            60 * day,
		"1 year 2 mons 3 days 04:05:06.789": (14*30+3)*day + 4*hour + 5*60e6 + 6.789e6,
		"-1 days +02:00:00":                 -day + 2*hour,
		"-59 days -14:00:00.5":              -59*day - 14*hour - 0.5e6,
		"-00:00:00.000001":                  -1,
		"720:00:00":                         30 * day,
	}
	for s, want := range tests {
		got, err := parseInterval(s)
		if err != nil || got != want {
			t.Errorf("parseInterval(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "1 week", "1:2", "x days"} {
		if _, err := parseInterval(s); err == nil {
			t.Errorf("parseInterval(%q) succeeded", s)
		}
	}
}
