package types

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/sqlerr"
)

func TestJSONBCanonicalText(t *testing.T) {
	// Outputs checked against PostgreSQL 15.
	for _, c := range []struct{ in, out string }{
		{`{"a":1,"b":[1,2]}`, `{"a": 1, "b": [1, 2]}`},
		{`{"b":1,"aa":2,"b":3}`, `{"b": 3, "aa": 2}`},
		{` [ ] `, `[]`},
		{`{}`, `{}`},
		{`[1e2, -0.0, 1.50, 0.00001e3]`, `[100, 0.0, 1.50, 0.01]`},
		{`-0`, `0`},
		{`1.50e-1`, `0.150`},
		{`"\u00e9\n\u0001"`, `"é\n\u0001"`},
		{`"\ud83d\ude00\/"`, `"😀/"`},
		{`{"a":{"c":true,"b":null}}`, `{"a": {"b": null, "c": true}}`},
		{`"tab\there"`, `"tab\there"`},
	} {
		got, err := ParseJSONB(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got != c.out {
			t.Errorf("%s: got %s, want %s", c.in, got, c.out)
		}
		if again, _ := ParseJSONB(got); again != got {
			t.Errorf("%s: canonical text %s reparses as %s", c.in, got, again)
		}
	}
}

func TestJSONBErrors(t *testing.T) {
	// DETAILs as PostgreSQL 15 gives them.
	for _, c := range []struct{ in, code, detail string }{
		{`{"a":}`, "22P02", `Expected JSON value, but found "}".`},
		{`abc`, "22P02", `Token "abc" is invalid.`},
		{`[1,2`, "22P02", `The input string ended unexpectedly.`},
		{``, "22P02", `The input string ended unexpectedly.`},
		{`01`, "22P02", `Token "01" is invalid.`},
		{`1.`, "22P02", `Token "1." is invalid.`},
		{`[1,2,x]`, "22P02", `Token "x" is invalid.`},
		{`"ab`, "22P02", `Token ""ab" is invalid.`},
		{`"a\qb"`, "22P02", `Escape sequence "\q" is invalid.`},
		{`{"a":1,}`, "22P02", `Expected string, but found "}".`},
		{`[,1]`, "22P02", `Expected JSON value, but found ",".`},
		{`@`, "22P02", `Token "@" is invalid.`},
		{`1abc`, "22P02", `Token "1abc" is invalid.`},
		{`"\ud800"`, "22P02", `Unicode low surrogate must follow a high surrogate.`},
		{`"\u12"`, "22P02", `"\u" must be followed by four hexadecimal digits.`},
		{`"\u0000"`, "22P05", `\u0000 cannot be converted to text.`},
		{`{"a" 1}`, "22P02", `Expected ":", but found "1".`},
		{`{1:2}`, "22P02", `Expected string or "}", but found "1".`},
		{`[1 2]`, "22P02", `Expected "," or "]", but found "2".`},
		{`{"a":1 "b"}`, "22P02", `Expected "," or "}", but found ""b"".`},
		{`1 2`, "22P02", `Expected end of input, but found "2".`},
		{"\"a\nb\"", "22P02", `Character with value 0x0a must be escaped.`},
	} {
		_, err := ParseJSONB(c.in)
		e, ok := err.(*sqlerr.Error)
		if !ok {
			t.Errorf("%q: got %v, want an error", c.in, err)
			continue
		}
		if e.Code != c.code || e.Detail != c.detail {
			t.Errorf("%q: got %s %q, want %s %q", c.in, e.Code, e.Detail, c.code, c.detail)
		}
	}
}

// jsonbOrder is a list of values in PostgreSQL 15's ORDER BY order.
var jsonbOrder = []string{
	`[]`, `null`, `""`, `"a"`, `"ab"`, `"b"`, `-10.5`, `-1`, `-0.001`, `0`, `0.5`, `1`,
	`1.0`, `10`, `10000000000`, `false`, `true`, `[null]`, `["a"]`, `[1]`, `[true]`,
	`[[]]`, `[{}]`, `[1, "2"]`, `[1, 2]`, `[1, [2]]`, `{}`, `{"a": null}`, `{"a": 1}`,
	`{"a": [1]}`, `{"aa": 1}`, `{"b": 1}`, `{"a": 1, "b": 2}`,
}

func TestJSONBOrder(t *testing.T) {
	for i, a := range jsonbOrder {
		for j, b := range jsonbOrder {
			want := cmpInt(i, j)
			if (a == "1" && b == "1.0") || (a == "1.0" && b == "1") {
				want = 0 // equal numbers; PostgreSQL printed them in text order
			}
			if got := CompareJSONB(a, b); got != want {
				t.Errorf("CompareJSONB(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestJSONBKeyOrderAndRoundTrip(t *testing.T) {
	vals := append([]string(nil), jsonbOrder...)
	vals = append(vals, `{"a": {"b": [1, 2.50, -3e-5]}, "x\u0000y": "\u0000"}`,
		`[-12345678901234567890.1234, 0.00, -0.5, 123e40]`, `"a\u0000b"`)
	for i := range vals {
		v, err := ParseJSONB(vals[i])
		if err != nil && sqlerr.Code(err) != "22P05" {
			t.Fatal(err)
		}
		if err == nil {
			vals[i] = v
		}
	}
	keys := make(map[string][]byte)
	for _, v := range vals {
		if _, err := ParseJSONB(v); err != nil {
			continue
		}
		k := AppendJSONBKey([]byte{7}, v)[1:]
		got, rest, err := DecodeJSONBKey(append(k, 9))
		if err != nil || got != v || !bytes.Equal(rest, []byte{9}) {
			t.Errorf("%s: decoded %q rest %v err %v", v, got, rest, err)
		}
		keys[v] = k
	}
	shuffled := append([]string(nil), jsonbOrder...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	sort.Slice(shuffled, func(i, j int) bool { return bytes.Compare(keys[shuffled[i]], keys[shuffled[j]]) < 0 })
	for i := range shuffled {
		if shuffled[i] != jsonbOrder[i] {
			t.Fatalf("key order %v\nwant %v", shuffled, jsonbOrder)
		}
	}
}

func TestJSONBNumbersOrderByKey(t *testing.T) {
	nums := []string{"-1000", "-999.5", "-1", "-0.5", "-0.05", "-0.049", "0", "0.001", "0.01", "0.1", "0.11", "1", "1.01", "9", "10", "99.9", "100", "1000000"}
	for i := 1; i < len(nums); i++ {
		a, b := AppendJSONBKey(nil, nums[i-1]), AppendJSONBKey(nil, nums[i])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key(%s) >= key(%s)", nums[i-1], nums[i])
		}
		if CompareNumericText(nums[i-1], nums[i]) >= 0 {
			t.Errorf("CompareNumericText(%s, %s) >= 0", nums[i-1], nums[i])
		}
	}
}

func TestJSONBPretty(t *testing.T) {
	v := MustParseJSON(`{"a":[],"b":{},"c":[1,{"x":null}]}`)
	want := "{\n    \"a\": [\n    ],\n    \"b\": {\n    },\n    \"c\": [\n        1,\n        {\n            \"x\": null\n        }\n    ]\n}"
	if got := string(AppendJSONPretty(nil, v, 0)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJSONBBinary(t *testing.T) {
	d, err := DecodeBinary(JSONBT, append([]byte{1}, `{"b":1,"a":2}`...))
	if err != nil || d.S != `{"a": 2, "b": 1}` {
		t.Fatalf("got %q %v", d.S, err)
	}
	if got := AppendBinary(nil, JSONBT, d); string(got) != "\x01"+d.S {
		t.Fatalf("binary %q", got)
	}
	if _, err := DecodeBinary(JSONBT, []byte("\x02{}")); err == nil {
		t.Fatal("version 2 accepted")
	}
}
